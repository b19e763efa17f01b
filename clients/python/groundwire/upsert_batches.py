"""Splitting an iterable of documents into UpsertDocuments calls, and merging their responses."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix

MAX_DOCUMENTS_PER_MESSAGE = 256
"""The server's limit of documents in one UpsertDocumentsRequest."""
DEFAULT_BATCH_BYTES = 8 * 1024 * 1024

DocumentLike = common.Document | Mapping[str, Any]
"""A Document message, or a mapping of its fields ({"document_id": ..., "text": ...})."""


def as_document(document: DocumentLike) -> common.Document:
    """The Document message for a message or a mapping of its fields."""
    if isinstance(document, common.Document):
        return document
    return common.Document(**document)


class _Batcher:
    """Packs documents into batches of at most `batch_size` documents and about `batch_bytes`."""

    def __init__(self, batch_size: int, batch_bytes: int) -> None:
        if not 1 <= batch_size <= MAX_DOCUMENTS_PER_MESSAGE:
            raise ValueError(f"batch_size must be 1-{MAX_DOCUMENTS_PER_MESSAGE}, got {batch_size}")
        self._limits = (batch_size, batch_bytes)
        self.batch: list[common.Document] = []
        self._size = 0

    def add(self, item: DocumentLike) -> list[common.Document] | None:
        """Add a document; returns the previous batch when this one did not fit in it."""
        document = as_document(item)
        size = document.ByteSize()
        full = None
        if self.batch and (
            len(self.batch) == self._limits[0] or self._size + size > self._limits[1]
        ):
            full, self.batch, self._size = self.batch, [], 0
        self.batch.append(document)
        self._size += size
        return full


def document_batches(
    documents: Iterable[DocumentLike],
    batch_size: int = 64,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
) -> Iterator[list[common.Document]]:
    """Consecutive batches of at most `batch_size` documents and about `batch_bytes` each.

    The iterable is read lazily: at most one batch is held in memory.
    """
    batcher = _Batcher(batch_size, batch_bytes)
    for item in documents:
        if (full := batcher.add(item)) is not None:
            yield full
    if batcher.batch:
        yield batcher.batch


async def async_document_batches(
    documents: Iterable[DocumentLike] | AsyncIterable[DocumentLike],
    batch_size: int = 64,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
) -> AsyncIterator[list[common.Document]]:
    """`document_batches` of an iterable or an async iterable."""
    if not isinstance(documents, AsyncIterable):
        for batch in document_batches(documents, batch_size, batch_bytes):
            yield batch
        return
    batcher = _Batcher(batch_size, batch_bytes)
    async for item in documents:
        if (full := batcher.add(item)) is not None:
            yield full
    if batcher.batch:
        yield batcher.batch


def upsert_message(
    collection: str, batch: list[common.Document], chunking: ix.ChunkingOptions | None
) -> ix.UpsertDocumentsRequest:
    """The single message of one UpsertDocuments call."""
    message = ix.UpsertDocumentsRequest(collection=collection, documents=batch)
    if chunking is not None:
        message.chunking.CopyFrom(chunking)
    return message


def merge_responses(responses: Iterable[ix.UpsertDocumentsResponse]) -> ix.UpsertDocumentsResponse:
    """One response for several calls: results in order, counts summed, the last sequence."""
    merged = ix.UpsertDocumentsResponse()
    for response in responses:
        merged.results.extend(response.results)
        merged.upserted += response.upserted
        merged.unchanged += response.unchanged
        merged.failed += response.failed
        merged.chunks_written += response.chunks_written
        merged.sequence = max(merged.sequence, response.sequence)
    return merged
