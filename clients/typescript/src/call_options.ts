/** Per-call options (deadline, cancellation, retries) and how they become grpc-js call options. */
import { status as Status } from "@grpc/grpc-js";
import { GroundwireError } from "./errors";
import type { RetryPolicy } from "./retry";

/** Options every call accepts. */
export interface CallOptions {
  /** Time the whole call may take, retries included, in milliseconds. Overrides the client default. */
  timeoutMs?: number;
  /** Absolute deadline of the whole call; wins over `timeoutMs`. */
  deadline?: Date;
  /** Aborting cancels the call; it then fails with a GroundwireError of code CANCELLED. */
  signal?: AbortSignal;
  /** Retry policy for this call (merged over the client's), or `false` for a single attempt. */
  retry?: Partial<RetryPolicy> | false;
}

/** The absolute deadline of a call, or undefined for none. */
export function callDeadline(options: CallOptions, defaultTimeoutMs: number | undefined): Date | undefined {
  if (options.deadline !== undefined) {
    return options.deadline;
  }
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  return timeoutMs === undefined ? undefined : new Date(Date.now() + timeoutMs);
}

/** The error a call aborted through its AbortSignal fails with. */
export function cancelledError(signal: AbortSignal): GroundwireError {
  return new GroundwireError(Status.CANCELLED, "cancelled by the caller's AbortSignal", {
    cause: signal.reason,
  });
}

/** Calls `cancel` when `signal` aborts; returns a function that stops listening. */
export function onAbort(signal: AbortSignal | undefined, cancel: () => void): () => void {
  if (signal === undefined) {
    return () => undefined;
  }
  signal.addEventListener("abort", cancel, { once: true });
  return () => signal.removeEventListener("abort", cancel);
}
