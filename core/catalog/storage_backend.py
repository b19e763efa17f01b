"""`StorageBackend`: where a catalog's collections live, chosen once at the composition root.

The catalog keeps the names, limits and locks; the backend opens, creates, finds and removes
collections. `LocalBackend` keeps each collection in its own directory (SQLite + FAISS +
Tantivy); `core.milvus.backend.MilvusBackend` keeps it in Milvus, where several groundwire
replicas share it (`shared`), so a catalog also looks there for collections another replica
created. File-level maintenance (snapshots, restore, compaction) exists only for the local
backend (`maintenance_refusal`).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Protocol

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.leftovers import clear_collection_leftovers

logger = logging.getLogger(__name__)


class StorageBackend(Protocol):
    """Opens, creates, lists and removes the collections of a catalog."""

    @property
    def shared(self) -> bool:
        """True when other processes create and drop the same collections (look there on a miss)."""
        ...

    def maintenance_refusal(self, operation: str) -> str | None:
        """Why `operation` (Snapshot, Restore, Compact...) is unavailable, naming the tool to
        use instead; None when it is available."""
        ...

    def stored(self, root: Path) -> list[tuple[str, str]]:
        """(tenant, name) of every stored collection (`root` = `<data_dir>/tenants`)."""
        ...

    def open(
        self,
        tenant: str,
        name: str,
        directory: Path,
        new_config: CollectionConfig | None,
        device: str,
        new_contents: bool = False,
    ) -> Collection:
        """Open the collection, or create it from `new_config` (AlreadyExists if it is stored);
        FileNotFoundError when it is not stored and there is no `new_config`."""
        ...

    def is_current(self, collection: Collection) -> bool:
        """False when the stored collection was dropped or re-created (a new incarnation) since
        `collection` was opened, by another replica of a shared backend."""
        ...

    def remove(self, tenant: str, name: str, collection: Collection) -> None:
        """Delete a closed collection's data."""
        ...

    def close(self) -> None:
        """Release connections (after every collection is closed)."""
        ...


class LocalBackend:
    """One directory per collection under the data directory (the embedded mode)."""

    shared = False

    def maintenance_refusal(self, operation: str) -> str | None:
        """Everything is available locally."""
        return None

    def stored(self, root: Path) -> list[tuple[str, str]]:
        """Collection directories per tenant; clears leftovers of interrupted restores first
        (only safe before serving, which is when the catalog calls this)."""
        found: list[tuple[str, str]] = []
        for tenant_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            clear_collection_leftovers(tenant_dir)
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
        """`Collection.open` on the directory (a create first removes what a drop left)."""
        if new_config is not None and directory.exists():
            shutil.rmtree(directory)
        return Collection.open(
            name, directory, new_config, device=device, new_contents=new_contents
        )

    def is_current(self, collection: Collection) -> bool:
        """Only this process drops or creates local collections: always current."""
        return True

    def remove(self, tenant: str, name: str, collection: Collection) -> None:
        """Delete the collection directory."""
        shutil.rmtree(collection.directory, ignore_errors=True)

    def close(self) -> None:
        """Nothing to release."""


def collection_dirs(tenant_dir: Path) -> list[tuple[str, str]]:
    """(tenant, collection) of each collection directory of `tenant_dir` (hidden ones are
    leftovers of swaps and restores, not collections)."""
    return [
        (tenant_dir.name, d.name)
        for d in sorted(tenant_dir.iterdir())
        if d.is_dir() and not d.name.startswith(".")
    ]
