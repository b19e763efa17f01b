"""`FollowerBackend`: the local storage backend of a server process that only reads.

With server.processes > 1 the primary process writes the data directory (`LocalBackend`) and
every other process opens it through this backend: collections are `FollowingCollection`s
(read-only, following the primary's change log), and the backend is `shared`, so the catalog
looks on disk for collections the primary created and checks on every lookup that the one it
holds is still current: the same mechanism that keeps Milvus replicas in step.
"""

from __future__ import annotations

from pathlib import Path

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.following_collection import READ_ONLY, FollowingCollection, store_identity
from core.catalog.storage_backend import collection_dirs
from core.catalog.version import INCARNATION_KEY
from core.errors import FailedPrecondition


class FollowerBackend:
    """The primary's collection directories, opened read-only."""

    shared = True

    def maintenance_refusal(self, operation: str) -> str | None:
        """Every maintenance operation runs in the primary process."""
        return f"{operation}: {READ_ONLY}"

    def stored(self, root: Path) -> list[tuple[str, str]]:
        """Collection directories per tenant (leftovers are the primary's to clear)."""
        if not root.is_dir():
            return []
        found: list[tuple[str, str]] = []
        for tenant_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            found += collection_dirs(tenant_dir)
        return found

    def open(
        self,
        tenant: str,
        name: str,
        directory: Path,
        new_config: CollectionConfig | None,
        device: str,
        new_contents: bool = False,
    ) -> Collection:
        """Open the stored collection read-only; creating one is refused."""
        if new_config is not None:
            raise FailedPrecondition(READ_ONLY)
        return FollowingCollection.open_following(name, directory, device)

    def is_current(self, collection: Collection) -> bool:
        """The store file is still the one opened (a drop, re-create or restore replaces it)
        and holds the same incarnation (a tune mints a new one in place)."""
        if not isinstance(collection, FollowingCollection):
            return True
        if store_identity(collection.directory) != collection.store_identity:
            return False
        return collection.store.get_meta(INCARNATION_KEY) == collection.incarnation

    def remove(self, tenant: str, name: str, collection: Collection) -> None:
        """Refused: the primary drops collections."""
        raise FailedPrecondition(READ_ONLY)

    def close(self) -> None:
        """Nothing to release."""
