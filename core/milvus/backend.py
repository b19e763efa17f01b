"""`MilvusBackend`: the catalog's `StorageBackend` for collections kept in Milvus.

One Milvus database per tenant (`naming.database_name`; see core/milvus/README.md for why not a
partition key), three Milvus collections per groundwire collection (`schema`, `sequence`). A
`Collection` over Milvus is the same class as a local one with other parts: `MilvusStore` as
its store, `MilvusDenseIndex` and `MilvusLexicalIndex` as its indexes, so every write still goes
through `Collection.commit` / `delete_documents` and the retrieval pipeline is unchanged. The
collection's long-term memories live in Milvus too (`memories.MilvusMemoryStore`).
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import replace
from pathlib import Path

from core.catalog.collection import CONFIG_KEY, Collection, settle_config
from core.catalog.collection_config import CollectionConfig
from core.catalog.version import INCARNATION_KEY
from core.dense.engine_factory import DenseEngine, DenseEngineName
from core.errors import AlreadyExists, Conflict
from core.milvus import naming
from core.milvus.client import MilvusConnections
from core.milvus.dense import MilvusDenseIndex
from core.milvus.lexical import MilvusLexicalIndex
from core.milvus.memories import MilvusMemoryStore
from core.milvus.options import MilvusOptions
from core.milvus.refusals import BACKUP_TOOL, TUNE_OPERATION, TUNE_REFUSAL
from core.milvus.store import MilvusStore

logger = logging.getLogger(__name__)


class MilvusBackend:
    """Collections in one Milvus deployment, shared by every replica pointed at it."""

    shared = True

    def __init__(self, options: MilvusOptions) -> None:
        self.options = options
        self._connections = MilvusConnections(options)

    def maintenance_refusal(self, operation: str) -> str | None:
        """Snapshots, restores and compaction belong to Milvus in this mode; tuning needs a
        collection's own model on local disk, which shared replicas don't have."""
        if operation == TUNE_OPERATION:
            return TUNE_REFUSAL
        return (
            f'{operation} is not available with storage.backend = "milvus": the collections '
            f"live in Milvus, which compacts them itself; back them up and restore them with "
            f"{BACKUP_TOOL}"
        )

    def stored(self, root: Path) -> list[tuple[str, str]]:
        """(tenant, name) of every groundwire collection in the tenants' databases."""
        found: list[tuple[str, str]] = []
        for database in sorted(self._connections.client().list_databases()):
            tenant = naming.tenant_of(self.options.database, database)
            if tenant is None:
                continue
            for milvus_name in sorted(self._connections.client(database).list_collections()):
                name = naming.collection_of(milvus_name)
                if name is not None:
                    found.append((tenant, name))
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
        """Open the tenant's collection from Milvus, or create it there from `new_config`."""
        database = naming.database_name(self.options.database, tenant)
        if new_config is None:
            if database not in self._connections.client().list_databases():
                raise FileNotFoundError(f"Milvus has no database {database!r}")
            store = MilvusStore.open(self._connections.client(database), self.options, name)
        else:
            # Section vectors live in the local store only (core/embed/section_vectors.py);
            # a Milvus collection ranks by its chunk vectors.
            new_config = replace(new_config, section_vectors=False)
            store = self._create(database, name, new_config)
        config = settle_config(store, new_config, new_contents)
        directory.mkdir(parents=True, exist_ok=True)  # nothing of it lives there
        dense = MilvusDenseIndex(store, self.options, config.embedding_dim)
        dense.upgrade_if_due(store.counts()[1])
        engine = DenseEngine(
            dense, DenseEngineName.MILVUS, "milvus", f"Milvus {dense.kind}", config.dense
        )
        memories = MilvusMemoryStore(store, self._connections.pymilvus, config.embedding_dim)
        return Collection(
            name,
            directory,
            store,
            engine,
            MilvusLexicalIndex(store),
            config,
            device=device,
            memories=lambda create: memories,
        )

    def _create(self, database: str, name: str, config: CollectionConfig) -> MilvusStore:
        self._connections.ensure_database(database)
        client = self._connections.client(database)
        try:
            existing = MilvusStore.open(client, self.options, name)
        except FileNotFoundError:
            existing = None
        if existing is not None:
            if existing.get_meta(CONFIG_KEY) is not None:
                raise AlreadyExists(f"collection {name!r} already exists")
            # created by another replica right now, or a create cut off: never drop it here
            raise Conflict(
                f"collection {name!r} is being created by another replica; retry in a moment "
                "(if it stays, a create was cut off: drop its Milvus collections "
                f"{naming.records_collection(name)!r} and its siblings in database {database!r})"
            )
        pymilvus = self._connections.pymilvus
        return MilvusStore.create(client, pymilvus, self.options, name, config.embedding_dim)

    def is_current(self, collection: Collection) -> bool:
        """The incarnation stored in Milvus is still the one `collection` was opened at (a
        drop through another replica removes it; a re-create mints a new one)."""
        store = collection.store
        if not isinstance(store, MilvusStore):
            return True
        try:
            return store.get_meta(INCARNATION_KEY) == collection.incarnation
        except Exception:
            if store.client.has_collection(store.records):
                raise
            return False  # dropped

    def remove(self, tenant: str, name: str, collection: Collection) -> None:
        """Drop the Milvus collections (memories too) and the local directory."""
        store = collection.store
        if isinstance(store, MilvusStore):
            store.drop()
        shutil.rmtree(collection.directory, ignore_errors=True)

    def close(self) -> None:
        """Close the Milvus connections."""
        self._connections.close()
