"""Collection maintenance through the catalog: compaction, snapshots and restore, per tenant.

Snapshots of a tenant's collection live in `<data_dir>/snapshots/<tenant>/<collection>/`, outside
the collection directory, so dropping a collection keeps its snapshots and a tenant can only
reach its own.
"""

from __future__ import annotations

import logging
from pathlib import Path

from core.catalog.catalog import CollectionCatalog
from core.catalog.collection import Collection
from core.catalog.collection_config import validate_collection_name
from core.catalog.compaction import CompactionReport, compact
from core.catalog.leftovers import LeftoverReport, clear_snapshot_leftovers
from core.catalog.snapshot import (
    SnapshotInfo,
    commit_restore,
    delete_snapshot,
    list_snapshots,
    stage_restore,
    take_snapshot,
)

logger = logging.getLogger(__name__)

SNAPSHOTS_DIR = "snapshots"


class CollectionMaintenance:
    """Compaction, snapshot and restore of the catalog's collections."""

    def __init__(self, catalog: CollectionCatalog) -> None:
        self._catalog = catalog

    def snapshots_root(self, tenant: str, name: str) -> Path:
        """Where the snapshots of the tenant's collection `name` live."""
        validate_collection_name(tenant, "tenant")
        validate_collection_name(name, "collection")
        return self._catalog.data_dir / SNAPSHOTS_DIR / tenant / name

    def clear_leftovers(self) -> LeftoverReport:
        """Remove half-written and half-deleted snapshots of every tenant. Call at start-up,
        before any snapshot can be running."""
        return clear_snapshot_leftovers(self._catalog.data_dir / SNAPSHOTS_DIR)

    def compact(self, tenant: str, name: str) -> CompactionReport:
        """Rebuild the collection's indexes without tombstones and reclaim store space."""
        self._catalog.require_file_maintenance("Compact")
        report = compact(self._catalog.get(tenant, name))
        logger.info("compacted %s/%s: %s", tenant, name, report)
        return report

    def snapshot(self, tenant: str, name: str) -> SnapshotInfo:
        """A consistent snapshot of a collection that keeps serving meanwhile."""
        self._catalog.require_file_maintenance("Snapshot")
        collection = self._catalog.get(tenant, name)
        return take_snapshot(collection, self.snapshots_root(tenant, name))

    def snapshots(self, tenant: str, name: str) -> list[SnapshotInfo]:
        """Snapshots of a collection, newest first (the collection itself may have been dropped)."""
        self._catalog.require_file_maintenance("ListSnapshots")
        return list_snapshots(self.snapshots_root(tenant, name))

    def delete_snapshot(self, tenant: str, name: str, snapshot_id: str) -> int:
        """Remove a snapshot; the bytes freed."""
        self._catalog.require_file_maintenance("DeleteSnapshot")
        return delete_snapshot(self.snapshots_root(tenant, name), snapshot_id)

    def restore(self, tenant: str, name: str, snapshot_id: str, target: str) -> Collection:
        """Restore a snapshot of `name` over `target` (= name: in place) or into a new collection.

        The snapshot is verified while it is copied, before anything live changes; in place, the
        collection keeps serving until the copy is complete and then swaps in atomically.
        """
        self._catalog.require_file_maintenance("Restore")
        validate_collection_name(target, "target_collection")
        root = self.snapshots_root(tenant, name)
        in_place = target == name
        with self._catalog.reserving(tenant, target, existing=in_place):
            directory = self._catalog.directory_for(tenant, target)
            staged = stage_restore(root, snapshot_id, directory)
            if in_place:
                self._catalog.detach(tenant, target).close()  # waits for a running write batch
            try:
                commit_restore(staged, directory)
            except BaseException:
                if in_place:  # the old directory is untouched: serve it again
                    self._catalog.attach(tenant, target, restored=False)
                raise
            restored = self._catalog.attach(tenant, target, restored=True)
        logger.info("restored %s/%s from snapshot %s of %s", tenant, target, snapshot_id, name)
        return restored
