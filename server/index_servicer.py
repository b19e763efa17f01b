"""IndexService: thin edge over the catalog and the indexer."""

from __future__ import annotations

from collections.abc import AsyncIterator

from core.catalog.collection import Collection, CollectionFigures
from core.dense.device_memory import DeviceMemory, device_memory
from core.errors import InvalidArgument, LimitExceeded, NotFound
from core.indexer import DocumentOutcome, Outcome
from core.ingest.chunking_spec import ChunkingSpec
from groundwire.v1 import index_service_pb2 as ix
from server.blocking import run_blocking
from server.cache_counting import CacheCounts, count_local, summed
from server.conversions import (
    chunk_to_proto,
    collection_info,
    document_from_proto,
    document_to_proto,
)
from server.handlers import Context
from server.index_validation import chunking_spec, collection_or_default, delete_ids, dense_spec
from server.principal import Role, current_principal
from server.reader_caches import reader_wait_s
from server.rpc_declaration import rpc
from server.runtime import Runtime

SERVICE = ix.DESCRIPTOR.services_by_name["IndexService"]
_OUTCOME = {
    Outcome.UPSERTED: ix.DOCUMENT_OUTCOME_UPSERTED,
    Outcome.UNCHANGED: ix.DOCUMENT_OUTCOME_UNCHANGED,
    Outcome.FAILED: ix.DOCUMENT_OUTCOME_FAILED,
}


class IndexServicer:
    """Validates, converts, calls core, converts back."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    def _collection(self, name: str, field: str = "collection") -> Collection:
        """The caller's collection; other tenants' collections are NotFound like missing ones."""
        default = self._runtime.settings.storage.default_collection
        tenant = current_principal().tenant
        return self._runtime.catalog.get(tenant, collection_or_default(name, default, field))

    @rpc("UpsertDocuments", Role.WRITER, needs_loaded=True)
    async def upsert_documents(
        self, requests: AsyncIterator[ix.UpsertDocumentsRequest], context: Context
    ) -> ix.UpsertDocumentsResponse:
        """UpsertDocuments: see the proto."""
        limit = self._runtime.settings.indexing.max_documents_per_message
        response = ix.UpsertDocumentsResponse()
        collection: Collection | None = None
        chunking = ChunkingSpec()
        async for request in requests:
            if collection is None:
                collection = self._collection(request.collection)
                chunking = chunking_spec(request.chunking, collection.config.chunking)
            elif request.collection and request.collection != collection.name:
                raise InvalidArgument.field(
                    "collection",
                    f"every message of the stream must name {collection.name!r}; got {request.collection!r}",
                )
            if len(request.documents) > limit:
                raise LimitExceeded(
                    f"documents: at most {limit} documents per message; got {len(request.documents)}; send smaller messages"
                )
            outcomes = await self._index_batch(collection, request, chunking, context)
            _add_outcomes(response, outcomes)
        if collection is not None:
            response.sequence = await run_blocking(
                context, self._runtime.executor, collection.checkpoint
            )
        return response

    async def _index_batch(
        self,
        collection: Collection,
        request: ix.UpsertDocumentsRequest,
        chunking: ChunkingSpec,
        context: Context,
    ) -> list[DocumentOutcome]:
        documents = [document_from_proto(d) for d in request.documents]
        runtime = self._runtime
        return await run_blocking(
            context, runtime.executor, runtime.indexer.index, collection, documents, chunking
        )

    @rpc("DeleteDocuments", Role.WRITER, needs_loaded=True)
    async def delete_documents(
        self, request: ix.DeleteDocumentsRequest, context: Context
    ) -> ix.DeleteDocumentsResponse:
        """DeleteDocuments: see the proto."""
        ids = delete_ids(list(request.document_ids))
        collection = self._collection(request.collection)
        result = await run_blocking(
            context, self._runtime.executor, collection.delete_documents, ids
        )
        return ix.DeleteDocumentsResponse(
            deleted=len(result.deleted), not_found=list(result.not_found), sequence=result.seq
        )

    @rpc("GetDocument", Role.READER, needs_loaded=True)
    async def get_document(
        self, request: ix.GetDocumentRequest, context: Context
    ) -> ix.GetDocumentResponse:
        """GetDocument: see the proto."""
        collection = self._collection(request.collection)
        if not request.document_id:
            raise InvalidArgument.field("document_id", "must not be empty")
        stored = await run_blocking(
            context, self._runtime.executor, collection.store.get_document, request.document_id
        )
        if stored is None:
            raise NotFound(
                f"document {request.document_id!r} does not exist in collection {collection.name!r}"
            )
        return ix.GetDocumentResponse(
            document=document_to_proto(stored),
            content_hash=stored.content_hash,
            chunks=[chunk_to_proto(c) for c in stored.chunks],
        )

    @rpc("CreateCollection", Role.ADMIN, needs_loaded=True)
    async def create_collection(
        self, request: ix.CreateCollectionRequest, context: Context
    ) -> ix.CreateCollectionResponse:
        """CreateCollection: see the proto."""
        name = collection_or_default(request.name, "", "name") if request.name else ""
        if not name:
            raise InvalidArgument.field(
                "name", "must not be empty; use 1-63 characters of a-z, 0-9, '_' and '-'"
            )
        spec = dense_spec(request.dense_index)
        default = ChunkingSpec(max_tokens=self._runtime.settings.indexing.chunk_max_tokens)
        chunking = chunking_spec(request.chunking, default)
        config = self._runtime.new_collection_config(
            dense=spec,
            chunk_max_tokens=chunking.max_tokens,
            chunker_kind=chunking.kind,
            chunk_overlap_tokens=chunking.overlap_tokens,
            description=request.description,
        )
        tenant = current_principal().tenant
        collection = await run_blocking(
            context, self._runtime.executor, self._runtime.catalog.create, tenant, name, config
        )
        return ix.CreateCollectionResponse(collection=collection_info(collection))

    @rpc("DropCollection", Role.ADMIN, needs_loaded=True)
    async def drop_collection(
        self, request: ix.DropCollectionRequest, context: Context
    ) -> ix.DropCollectionResponse:
        """DropCollection: see the proto."""
        name = collection_or_default(request.name, "", "name") if request.name else ""
        if not name:
            raise InvalidArgument.field("name", "must not be empty")
        tenant = current_principal().tenant
        dropped = await run_blocking(
            context, self._runtime.executor, self._runtime.catalog.drop, tenant, name
        )
        return ix.DropCollectionResponse(dropped_documents=dropped)

    @rpc("ListCollections", Role.READER, needs_loaded=True)
    async def list_collections(
        self, request: ix.ListCollectionsRequest, context: Context
    ) -> ix.ListCollectionsResponse:
        """ListCollections: see the proto."""
        catalog = self._runtime.catalog
        tenant = current_principal().tenant
        infos = []
        for name in catalog.names(tenant):
            try:
                infos.append(collection_info(catalog.get(tenant, name)))
            except NotFound:
                continue  # dropped meanwhile
        return ix.ListCollectionsResponse(collections=infos)

    @rpc("Stats", Role.READER, needs_loaded=True)
    async def stats(self, request: ix.StatsRequest, context: Context) -> ix.StatsResponse:
        """Stats: see the proto."""
        collection = self._collection(request.collection)
        tenant = current_principal().tenant

        def gather() -> tuple[CollectionFigures, int, int, DeviceMemory]:
            return (
                collection.figures(),
                collection.memory_count(),
                collection.store.edge_count(),
                device_memory(collection.dense_device),
            )

        figures, memories, edges, device = await run_blocking(
            context, self._runtime.executor, gather
        )
        counts = await self._cache_counts(tenant, collection.name, context)
        return ix.StatsResponse(
            collection=collection_info(collection),
            sequence=figures.sequence,
            dense_sequence=figures.dense_sequence,
            lexical_sequence=figures.lexical_sequence,
            dense_vectors=figures.dense_vectors,
            tombstones=figures.dense_tombstones,
            disk_bytes=figures.disk_bytes,
            dense_memory_bytes=figures.dense_memory_bytes,
            dense_device=collection.dense_device,
            dense_engine=collection.dense_engine,
            memories=memories,
            link_edges=edges,
            device_memory_allocated_bytes=device.allocated,
            device_memory_reserved_bytes=device.reserved,
            device_memory_total_bytes=device.total,
            embedding_cache_hits=counts.embedding_hits,
            embedding_cache_misses=counts.embedding_misses,
            retrieval_cache_hits=counts.retrieval_hits,
            retrieval_cache_misses=counts.retrieval_misses,
            retrieval_cache_entries=counts.retrieval_entries,
            cache_processes=counts.processes,
        )

    async def _cache_counts(self, tenant: str, collection: str, context: Context) -> CacheCounts:
        """The cache counters of this process plus those of every reader that answers (in the
        primary of several processes; server/cache_counting.py)."""
        runtime = self._runtime
        counts = [count_local(runtime, tenant, collection)]
        if runtime.reader_caches is not None:
            wait = reader_wait_s(context.time_remaining())
            counts += await runtime.reader_caches.count_caches(tenant, collection, wait)
        return summed(counts)


def _add_outcomes(response: ix.UpsertDocumentsResponse, outcomes: list[DocumentOutcome]) -> None:
    for outcome in outcomes:
        response.results.append(
            ix.DocumentResult(
                document_id=outcome.document_id,
                outcome=_OUTCOME[outcome.outcome],
                chunk_count=outcome.chunk_count,
                error=outcome.error,
                risk_flags=list(outcome.risk_flags),
            )
        )
        if outcome.outcome is Outcome.UPSERTED:
            response.upserted += 1
            response.chunks_written += outcome.chunk_count
        elif outcome.outcome is Outcome.UNCHANGED:
            response.unchanged += 1
        else:
            response.failed += 1
