"""IndexService calls of the synchronous client: documents and collections."""

from __future__ import annotations

from collections.abc import Iterable

import grpc

from groundwire.errors import GroundwireError
from groundwire.sync_invoker import SyncInvoker
from groundwire.upsert_batches import (
    DEFAULT_BATCH_BYTES,
    DocumentLike,
    document_batches,
    merge_responses,
    upsert_message,
)
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc


class IndexCalls:
    """UpsertDocuments, DeleteDocuments, GetDocument, collections and Stats; mixed into `Client`."""

    _invoker: SyncInvoker
    _index: ix_grpc.IndexServiceStub

    def upsert_documents(
        self,
        documents: Iterable[DocumentLike],
        *,
        collection: str = "",
        chunking: ix.ChunkingOptions | None = None,
        batch_size: int = 64,
        batch_bytes: int = DEFAULT_BATCH_BYTES,
        timeout: float | None = None,
    ) -> ix.UpsertDocumentsResponse:
        """Index documents (Document messages or mappings of their fields), read lazily.

        They go in calls of at most `batch_size` documents (about `batch_bytes`), each retried
        whole when it fails transiently (upserts are idempotent by id and content hash).
        Returns one result per document in order; a failed document does not fail the others.
        `timeout` applies to each call.
        """
        return merge_responses(
            self._invoker.client_stream(
                self._index.UpsertDocuments, [upsert_message(collection, batch, chunking)], timeout
            )
            for batch in document_batches(documents, batch_size, batch_bytes)
        )

    def delete_documents(
        self, document_ids: Iterable[str], *, collection: str = "", timeout: float | None = None
    ) -> ix.DeleteDocumentsResponse:
        """Delete documents and their chunks; unknown ids are listed in `not_found`."""
        request = ix.DeleteDocumentsRequest(collection=collection, document_ids=list(document_ids))
        response: ix.DeleteDocumentsResponse = self._invoker.unary(
            self._index.DeleteDocuments, request, timeout
        )
        return response

    def get_document(
        self, document_id: str, *, collection: str = "", timeout: float | None = None
    ) -> ix.GetDocumentResponse:
        """A stored document with its content hash and chunks (NOT_FOUND when there is none)."""
        request = ix.GetDocumentRequest(collection=collection, document_id=document_id)
        response: ix.GetDocumentResponse = self._invoker.unary(
            self._index.GetDocument, request, timeout
        )
        return response

    def create_collection(
        self,
        name: str,
        *,
        description: str = "",
        dense_index: ix.DenseIndexConfig | None = None,
        chunking: ix.ChunkingOptions | None = None,
        exist_ok: bool = False,
        timeout: float | None = None,
    ) -> ix.CollectionInfo:
        """Create an empty collection; returns it.

        When the name is taken: ALREADY_EXISTS, or with `exist_ok` the existing collection
        (whatever its configuration).
        """
        request = ix.CreateCollectionRequest(
            name=name, description=description, dense_index=dense_index, chunking=chunking
        )
        try:
            response: ix.CreateCollectionResponse = self._invoker.unary(
                self._index.CreateCollection, request, timeout
            )
        except GroundwireError as error:
            if not (exist_ok and error.code is grpc.StatusCode.ALREADY_EXISTS):
                raise
            return (self.stats(name, timeout=timeout)).collection
        return response.collection

    def drop_collection(self, name: str, *, timeout: float | None = None) -> int:
        """Delete a collection and all its data; returns how many documents it held."""
        request = ix.DropCollectionRequest(name=name)
        response: ix.DropCollectionResponse = self._invoker.unary(
            self._index.DropCollection, request, timeout
        )
        return response.dropped_documents

    def list_collections(self, *, timeout: float | None = None) -> list[ix.CollectionInfo]:
        """The caller's collections, sorted by name."""
        request = ix.ListCollectionsRequest()
        return list(self._invoker.unary(self._index.ListCollections, request, timeout).collections)

    def stats(self, collection: str = "", *, timeout: float | None = None) -> ix.StatsResponse:
        """Sizes, index state and cache figures of a collection ("" : the default collection)."""
        request = ix.StatsRequest(collection=collection)
        response: ix.StatsResponse = self._invoker.unary(self._index.Stats, request, timeout)
        return response

    def tune_collection(
        self,
        collection: str = "",
        *,
        max_steps: int | None = None,
        max_epochs: int | None = None,
        max_pairs: int | None = None,
        max_seconds: float | None = None,
        timeout: float | None = None,
    ) -> ix.TuneCollectionResponse:
        """Fine-tune the collection's own copy of the embedding model and re-embed it (admin).

        Takes minutes; leave `timeout` None (no deadline) or give it room. The bounds tighten
        the server's `tune` settings; None keeps them.
        """
        request = tune_request(collection, max_steps, max_epochs, max_pairs, max_seconds)
        response: ix.TuneCollectionResponse = self._invoker.unary(
            self._index.TuneCollection, request, timeout
        )
        return response


def tune_request(
    collection: str,
    max_steps: int | None,
    max_epochs: int | None,
    max_pairs: int | None,
    max_seconds: float | None,
) -> ix.TuneCollectionRequest:
    """A TuneCollectionRequest with only the given bounds set."""
    request = ix.TuneCollectionRequest(collection=collection)
    if max_steps is not None:
        request.max_steps = max_steps
    if max_epochs is not None:
        request.max_epochs = max_epochs
    if max_pairs is not None:
        request.max_pairs = max_pairs
    if max_seconds is not None:
        request.max_seconds = max_seconds
    return request
