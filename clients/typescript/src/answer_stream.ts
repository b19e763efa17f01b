/** Answer as an async iterable of typed events: started, then text deltas, then the summary. */
import type { ClientReadableStream } from "@grpc/grpc-js";
import { cancelledError, onAbort } from "./call_options";
import { toGroundwireError } from "./errors";
import type {
  AnswerResponse,
  AnswerStarted,
  AnswerSummary,
} from "./generated/groundwire/v1/retrieval_service";
import { withRetries, type RetryPolicy } from "./retry";

/** One event of an answer stream; switch on `type`. */
export type AnswerEvent =
  | ({ type: "started" } & AnswerStarted)
  | { type: "delta"; text: string }
  | ({ type: "summary" } & AnswerSummary);

/** The typed event of one stream message (undefined for a message with no event set). */
export function answerEvent(response: AnswerResponse): AnswerEvent | undefined {
  if (response.started !== undefined) {
    return { type: "started", ...response.started };
  }
  if (response.delta !== undefined) {
    return { type: "delta", text: response.delta.text };
  }
  if (response.summary !== undefined) {
    return { type: "summary", ...response.summary };
  }
  return undefined;
}

interface OpenStream {
  call: ClientReadableStream<AnswerResponse>;
  messages: AsyncIterator<AnswerResponse>;
  first: IteratorResult<AnswerResponse>;
  stopListening: () => void;
}

/**
 * Streams the events of the call `open` starts. A failure before the first event is retried per
 * `policy`; later failures, and aborting `signal`, end the iteration with a GroundwireError.
 * Leaving a `for await` loop early cancels the call.
 */
export async function* answerEvents(
  open: (deadline: Date | undefined) => ClientReadableStream<AnswerResponse>,
  policy: RetryPolicy,
  deadline: Date | undefined,
  signal: AbortSignal | undefined,
): AsyncGenerator<AnswerEvent, void, undefined> {
  const stream = await withRetries(policy, deadline, signal, (attemptDeadline) =>
    openStream(open(attemptDeadline), signal),
  );
  try {
    let next = stream.first;
    while (next.done !== true) {
      const event = answerEvent(next.value);
      if (event !== undefined) {
        yield event;
      }
      if (signal?.aborted === true) {
        throw cancelledError(signal);
      }
      next = await failure(stream.messages.next(), signal);
    }
  } finally {
    stream.stopListening();
    stream.call.cancel();
  }
}

async function openStream(
  call: ClientReadableStream<AnswerResponse>,
  signal: AbortSignal | undefined,
): Promise<OpenStream> {
  const stopListening = onAbort(signal, () => call.cancel());
  const messages = call[Symbol.asyncIterator]() as AsyncIterator<AnswerResponse>;
  try {
    const first = await failure(messages.next(), signal);
    return { call, messages, first, stopListening };
  } catch (error) {
    stopListening();
    call.cancel();
    throw error;
  }
}

async function failure<T>(pending: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  try {
    return await pending;
  } catch (error) {
    throw signal?.aborted === true ? cancelledError(signal) : toGroundwireError(error);
  }
}
