/** UpsertDocuments from an iterable or async iterable of documents, sent in batches. */
import type { ClientWritableStream } from "@grpc/grpc-js";
import type { UpsertDocumentsRequest } from "./generated/groundwire/v1/index_service";

/** Documents per stream message (the server accepts at most 256). */
export const UPSERT_BATCH_SIZE = 64;

/**
 * Writes `batches` to `call` with back-pressure and ends it. Stops early once `finished` settles
 * (the server answered or failed); a failing source makes this reject.
 */
export async function writeBatches(
  call: ClientWritableStream<UpsertDocumentsRequest>,
  batches: AsyncIterable<UpsertDocumentsRequest>,
  finished: Promise<unknown>,
): Promise<void> {
  let settled = false;
  const done = finished.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for await (const batch of batches) {
    if (settled) {
      return;
    }
    if (!call.write(batch)) {
      await Promise.race([new Promise((resolve) => call.once("drain", resolve)), done]);
    }
  }
  if (!settled) {
    call.end();
  }
}

/** Groups `documents` into request messages of at most `size` documents (at least one message). */
export async function* requestBatches<D>(
  documents: Iterable<D> | AsyncIterable<D>,
  size: number,
  toRequest: (documents: D[], first: boolean) => UpsertDocumentsRequest,
): AsyncGenerator<UpsertDocumentsRequest> {
  let batch: D[] = [];
  let first = true;
  for await (const document of documents) {
    batch.push(document);
    if (batch.length >= size) {
      yield toRequest(batch, first);
      first = false;
      batch = [];
    }
  }
  if (batch.length > 0 || first) {
    yield toRequest(batch, first);
  }
}
