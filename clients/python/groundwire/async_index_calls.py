"""IndexService calls of the asyncio client: documents and collections."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable

import grpc

from groundwire.async_invoker import AsyncInvoker
from groundwire.errors import GroundwireError
from groundwire.index_calls import tune_request
from groundwire.upsert_batches import (
    DEFAULT_BATCH_BYTES,
    DocumentLike,
    async_document_batches,
    merge_responses,
    upsert_message,
)
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc


class AsyncIndexCalls:
    """UpsertDocuments, DeleteDocuments, GetDocument, collections and Stats; mixed into `AsyncClient`."""

    _invoker: AsyncInvoker
    _index: ix_grpc.IndexServiceStub

    async def upsert_documents(
        self,
        documents: Iterable[DocumentLike] | AsyncIterable[DocumentLike],
        *,
        collection: str = "",
        chunking: ix.ChunkingOptions | None = None,
        batch_size: int = 64,
        batch_bytes: int = DEFAULT_BATCH_BYTES,
        timeout: float | None = None,
    ) -> ix.UpsertDocumentsResponse:
        """Index documents from an iterable or async iterable (see `Client.upsert_documents`)."""
        responses: list[ix.UpsertDocumentsResponse] = []
        async for batch in async_document_batches(documents, batch_size, batch_bytes):
            message = upsert_message(collection, batch, chunking)
            responses.append(
                await self._invoker.client_stream(self._index.UpsertDocuments, [message], timeout)
            )
        return merge_responses(responses)

    async def delete_documents(
        self, document_ids: Iterable[str], *, collection: str = "", timeout: float | None = None
    ) -> ix.DeleteDocumentsResponse:
        """Delete documents and their chunks; unknown ids are listed in `not_found`."""
        request = ix.DeleteDocumentsRequest(collection=collection, document_ids=list(document_ids))
        return await self._invoker.unary(self._index.DeleteDocuments, request, timeout)

    async def get_document(
        self, document_id: str, *, collection: str = "", timeout: float | None = None
    ) -> ix.GetDocumentResponse:
        """A stored document with its content hash and chunks (NOT_FOUND when there is none)."""
        request = ix.GetDocumentRequest(collection=collection, document_id=document_id)
        return await self._invoker.unary(self._index.GetDocument, request, timeout)

    async def create_collection(
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
            response: ix.CreateCollectionResponse = await self._invoker.unary(
                self._index.CreateCollection, request, timeout
            )
        except GroundwireError as error:
            if not (exist_ok and error.code is grpc.StatusCode.ALREADY_EXISTS):
                raise
            return (await self.stats(name, timeout=timeout)).collection
        return response.collection

    async def drop_collection(self, name: str, *, timeout: float | None = None) -> int:
        """Delete a collection and all its data; returns how many documents it held."""
        request = ix.DropCollectionRequest(name=name)
        response: ix.DropCollectionResponse = await self._invoker.unary(
            self._index.DropCollection, request, timeout
        )
        return response.dropped_documents

    async def list_collections(self, *, timeout: float | None = None) -> list[ix.CollectionInfo]:
        """The caller's collections, sorted by name."""
        request = ix.ListCollectionsRequest()
        response = await self._invoker.unary(self._index.ListCollections, request, timeout)
        return list(response.collections)

    async def stats(
        self, collection: str = "", *, timeout: float | None = None
    ) -> ix.StatsResponse:
        """Sizes, index state and cache figures of a collection ("" : the default collection)."""
        request = ix.StatsRequest(collection=collection)
        return await self._invoker.unary(self._index.Stats, request, timeout)

    async def tune_collection(
        self,
        collection: str = "",
        *,
        max_steps: int | None = None,
        max_epochs: int | None = None,
        max_pairs: int | None = None,
        max_seconds: float | None = None,
        timeout: float | None = None,
    ) -> ix.TuneCollectionResponse:
        """Fine-tune the collection's own copy of the embedding model and re-embed it (admin);
        see `Client.tune_collection`."""
        request = tune_request(collection, max_steps, max_epochs, max_pairs, max_seconds)
        return await self._invoker.unary(self._index.TuneCollection, request, timeout)
