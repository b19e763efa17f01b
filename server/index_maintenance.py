"""The IndexService RPCs that maintain collections: compaction, snapshots, restore, memories."""

from __future__ import annotations

from core.errors import InvalidArgument
from core.memory.validation import validate_memories
from groundwire.v1 import index_service_pb2 as ix
from server.blocking import run_blocking
from server.conversions import collection_info, memory_from_proto, snapshot_to_proto
from server.handlers import Context
from server.index_validation import collection_or_default
from server.principal import Role, current_principal
from server.rpc_declaration import rpc
from server.runtime import Runtime


class IndexMaintenance:
    """Validates, converts, calls core (catalog maintenance, memory store), converts back."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    def _scope(self, name: str, field: str = "collection") -> tuple[str, str]:
        default = self._runtime.settings.storage.default_collection
        return current_principal().tenant, collection_or_default(name, default, field)

    @rpc("CompactCollection", Role.ADMIN, needs_loaded=True)
    async def compact_collection(
        self, request: ix.CompactCollectionRequest, context: Context
    ) -> ix.CompactCollectionResponse:
        """CompactCollection: see the proto."""
        tenant, name = self._scope(request.collection)
        report = await run_blocking(
            context, self._runtime.executor, self._runtime.maintenance.compact, tenant, name
        )
        return ix.CompactCollectionResponse(
            removed_tombstones=report.removed_tombstones,
            disk_bytes_before=report.disk_bytes_before,
            disk_bytes_after=report.disk_bytes_after,
            sequence=report.sequence,
        )

    @rpc("SnapshotCollection", Role.ADMIN, needs_loaded=True)
    async def snapshot_collection(
        self, request: ix.SnapshotCollectionRequest, context: Context
    ) -> ix.SnapshotCollectionResponse:
        """SnapshotCollection: see the proto."""
        tenant, name = self._scope(request.collection)
        info = await run_blocking(
            context, self._runtime.executor, self._runtime.maintenance.snapshot, tenant, name
        )
        return ix.SnapshotCollectionResponse(snapshot=snapshot_to_proto(info))

    @rpc("ListSnapshots", Role.READER, needs_loaded=True)
    async def list_snapshots(
        self, request: ix.ListSnapshotsRequest, context: Context
    ) -> ix.ListSnapshotsResponse:
        """ListSnapshots: see the proto."""
        tenant, name = self._scope(request.collection)
        infos = await run_blocking(
            context, self._runtime.executor, self._runtime.maintenance.snapshots, tenant, name
        )
        return ix.ListSnapshotsResponse(snapshots=[snapshot_to_proto(i) for i in infos])

    @rpc("RestoreCollection", Role.ADMIN, needs_loaded=True)
    async def restore_collection(
        self, request: ix.RestoreCollectionRequest, context: Context
    ) -> ix.RestoreCollectionResponse:
        """RestoreCollection: see the proto."""
        tenant, name = self._scope(request.collection)
        _require_id(request.snapshot_id)
        target = request.target_collection or name
        restored = await run_blocking(
            context,
            self._runtime.executor,
            self._runtime.maintenance.restore,
            tenant,
            name,
            request.snapshot_id,
            target,
        )
        return ix.RestoreCollectionResponse(
            collection=collection_info(restored), sequence=restored.store.sequence()
        )

    @rpc("DeleteSnapshot", Role.ADMIN, needs_loaded=True)
    async def delete_snapshot(
        self, request: ix.DeleteSnapshotRequest, context: Context
    ) -> ix.DeleteSnapshotResponse:
        """DeleteSnapshot: see the proto."""
        tenant, name = self._scope(request.collection)
        _require_id(request.snapshot_id)
        freed = await run_blocking(
            context,
            self._runtime.executor,
            self._runtime.maintenance.delete_snapshot,
            tenant,
            name,
            request.snapshot_id,
        )
        return ix.DeleteSnapshotResponse(freed_bytes=freed)

    @rpc("AddMemories", Role.WRITER, needs_loaded=True)
    async def add_memories(
        self, request: ix.AddMemoriesRequest, context: Context
    ) -> ix.AddMemoriesResponse:
        """AddMemories: see the proto."""
        tenant, name = self._scope(request.collection)
        drafts = [memory_from_proto(m) for m in request.memories]
        if not drafts:
            raise InvalidArgument.field("memories", "send at least one memory")
        validate_memories(drafts, self._runtime.settings.memory.max_per_request)
        collection = self._runtime.catalog.get(tenant, name)
        runtime = self._runtime

        def store() -> list[str]:
            runtime.model_check.require(collection)  # memories live in the collection's space
            vectors = runtime.embedders(collection).embed_documents([d.text for d in drafts])
            return collection.memories().add(drafts, vectors)

        ids = await run_blocking(context, runtime.executor, store)
        return ix.AddMemoriesResponse(memory_ids=ids)


def _require_id(snapshot_id: str) -> None:
    if not snapshot_id:
        raise InvalidArgument.field("snapshot_id", "must not be empty; see ListSnapshots")
