"""The set of collections under a data directory, grouped by tenant.

Layout: `<data_dir>/tenants/<tenant>/<collection>/` holds one collection. A data directory from
before tenants (`<data_dir>/collections/<collection>/`) is moved under the default tenant once.
Every lookup is by (tenant, name): a tenant can never reach, list or count another's collections.

A restore claims its target name with `reserving` for as long as it copies and swaps files: the
name then counts toward the tenant's limit, and creates, drops or other restores of that name
are refused until it is done. The restored collection is opened outside the catalog lock, so a
slow open (replaying a large index) never stalls lookups of other collections.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig, validate_collection_name
from core.catalog.storage_backend import LocalBackend, StorageBackend
from core.errors import AlreadyExists, Conflict, FailedPrecondition, LimitExceeded, NotFound

logger = logging.getLogger(__name__)

TENANTS_DIR = "tenants"
LEGACY_COLLECTIONS_DIR = "collections"
DEFAULT_TENANT = "default"

Key = tuple[str, str]


class CollectionCatalog:
    """Opens, creates and drops collections; one directory per (tenant, collection)."""

    def __init__(
        self,
        data_dir: Path,
        max_collections_per_tenant: int = 1000,
        device: str = "cpu",
        backend: StorageBackend | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.backend: StorageBackend = backend or LocalBackend()
        self.device = device
        """Torch device dense engines are built for; set before `open_all` (see engine_factory)."""
        self.root = data_dir / TENANTS_DIR
        self.max_collections_per_tenant = max_collections_per_tenant
        self._collections: dict[Key, Collection] = {}
        self._reserved: set[Key] = set()  # names a restore is writing; under _lock
        self._lock = threading.Lock()

    def directory_for(self, tenant: str, name: str) -> Path:
        """Where the collection `name` of `tenant` lives (whether or not it exists)."""
        validate_collection_name(tenant, "tenant")
        return self.root / tenant / name

    def open_all(self) -> None:
        """Open every collection on disk, replaying or rebuilding derived indexes as needed.

        Call once, before serving: leftovers of interrupted restores are removed first (see
        core.catalog.leftovers), which is only safe while no restore can be running."""
        self._migrate_legacy_layout()
        self.root.mkdir(parents=True, exist_ok=True)
        for tenant, name in self.backend.stored(self.root):
            self._open_existing(tenant, name)

    def _open_existing(self, tenant: str, name: str, quiet: bool = False) -> Collection | None:
        """Open a stored collection; None when it is not one (`quiet`: a lookup on a shared
        backend, where a missing collection is an everyday NotFound, not worth a warning)."""
        directory = self.directory_for(tenant, name)
        try:
            collection = self.backend.open(tenant, name, directory, None, self.device)
        except FileNotFoundError:
            if not quiet:
                logger.warning("skipping %s/%s: not a collection", tenant, name)
            return None
        with self._lock:
            found = self._collections.setdefault((tenant, name), collection)
        if found is not collection:  # opened meanwhile by another request
            collection.close()
        else:
            logger.info("opened collection %s/%s", tenant, name)
        return found

    def _migrate_legacy_layout(self) -> None:
        legacy = self.data_dir / LEGACY_COLLECTIONS_DIR
        target = self.root / DEFAULT_TENANT
        if legacy.is_dir() and not target.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            legacy.rename(target)
            logger.warning("moved %s to %s (collections now live per tenant)", legacy, target)

    def create(self, tenant: str, name: str, config: CollectionConfig) -> Collection:
        """Create an empty collection; AlreadyExists if the tenant has one of that name."""
        validate_collection_name(name, "name")
        directory = self.directory_for(tenant, name)
        with self._lock:
            if (tenant, name) in self._collections:
                raise AlreadyExists(f"collection {name!r} already exists")
            self._check_free(tenant, name)
            self._check_limit(tenant)
            collection = self.backend.open(tenant, name, directory, config, self.device)
            self._collections[(tenant, name)] = collection
        logger.info("created collection %s/%s", tenant, name)
        return collection

    def _check_free(self, tenant: str, name: str) -> None:
        """Conflict when a restore holds the name (call under `_lock`)."""
        if (tenant, name) in self._reserved:
            raise Conflict(
                f"a restore into collection {name!r} is in progress; retry when it has finished"
            )

    def _check_limit(self, tenant: str) -> None:
        """LimitExceeded when the tenant's collections and reserved new names reach the limit
        (call under `_lock`)."""
        owned = sum(1 for t, _ in self._collections if t == tenant)
        owned += sum(
            1 for key in self._reserved if key[0] == tenant and key not in self._collections
        )
        if owned >= self.max_collections_per_tenant:
            raise LimitExceeded(
                f"the tenant already has {owned} collections, the limit "
                f"(limits.max_collections_per_tenant); drop one before creating another"
            )

    @contextmanager
    def reserving(self, tenant: str, name: str, *, existing: bool) -> Iterator[None]:
        """Hold the name (tenant, name) for a restore until the block ends.

        `existing`: the restore replaces the open collection of that name (NotFound if there is
        none); otherwise the name must be free (AlreadyExists) and within the tenant's limit
        (LimitExceeded). Conflict while another restore holds the name.
        """
        key = (tenant, name)
        with self._lock:
            self._check_free(tenant, name)
            if existing and key not in self._collections:
                raise NotFound(f"collection {name!r} does not exist")
            if not existing:
                if key in self._collections:
                    raise AlreadyExists(
                        f"collection {name!r} already exists; restore into a new name or into "
                        "the snapshot's own collection"
                    )
                self._check_limit(tenant)
            self._reserved.add(key)
        try:
            yield
        finally:
            with self._lock:
                self._reserved.discard(key)

    def get(self, tenant: str, name: str) -> Collection:
        """The tenant's open collection named `name`; NotFound otherwise."""
        with self._lock:
            collection = self._collections.get((tenant, name))
        if collection is not None and self.backend.shared:
            if not self.backend.is_current(collection):  # dropped or re-created elsewhere
                self._forget(tenant, name, collection)
                collection = None
        if collection is None and self.backend.shared and (tenant, name) not in self._reserved:
            validate_collection_name(name, "collection")
            collection = self._open_existing(tenant, name, quiet=True)  # created elsewhere
        if collection is None:
            raise NotFound(
                f"collection {name!r} does not exist; create it with CreateCollection "
                "or list collections with ListCollections"
            )
        collection.catch_up()  # a collection another process writes applies its writes first
        return collection

    def _forget(self, tenant: str, name: str, collection: Collection) -> None:
        """Remove a collection another replica dropped or re-created from this catalog and
        release it (its data is gone or belongs to the new incarnation: nothing to save)."""
        with self._lock:
            if self._collections.get((tenant, name)) is collection:
                del self._collections[(tenant, name)]
        try:
            collection.close()
        except Exception:  # its stored parts may be gone already
            logger.debug("closing stale %s/%s", tenant, name, exc_info=True)
        logger.info("forgot collection %s/%s (dropped or re-created elsewhere)", tenant, name)

    def get_or_create(self, tenant: str, name: str, config: CollectionConfig) -> Collection:
        """The tenant's collection named `name`, created with `config` if missing."""
        try:
            return self.get(tenant, name)
        except NotFound:
            try:
                return self.create(tenant, name, config)
            except AlreadyExists:
                return self.get(tenant, name)

    def drop(self, tenant: str, name: str) -> int:
        """Delete a collection and its directory; returns how many documents it held."""
        with self._lock:
            self._check_free(tenant, name)
            collection = self._collections.pop((tenant, name), None)
        if collection is None:
            raise NotFound(f"collection {name!r} does not exist")
        with collection.write_lock:
            documents, _ = collection.store.counts()
        collection.close()
        self.backend.remove(tenant, name, collection)
        logger.info("dropped collection %s/%s (%d documents)", tenant, name, documents)
        return documents

    def detach(self, tenant: str, name: str) -> Collection:
        """Remove the collection from the catalog without closing it (the caller closes it)."""
        with self._lock:
            collection = self._collections.pop((tenant, name), None)
        if collection is None:
            raise NotFound(f"collection {name!r} does not exist")
        return collection

    def attach(self, tenant: str, name: str, *, restored: bool) -> Collection:
        """Open the collection directory of (tenant, name) and add it; AlreadyExists if open.

        Only for a name held with `reserving` (a restore), so nothing else opens, creates or
        drops it meanwhile; the directory is opened outside the catalog lock. `restored`: its
        files were just replaced, so it gets a new incarnation (see core.catalog.version).
        """
        directory = self.directory_for(tenant, name)
        with self._lock:
            if (tenant, name) not in self._reserved:
                raise RuntimeError(f"attach({tenant!r}, {name!r}) outside reserving()")
            if (tenant, name) in self._collections:
                raise AlreadyExists(f"collection {name!r} already exists")
        collection = self.backend.open(
            tenant, name, directory, None, self.device, new_contents=restored
        )
        with self._lock:
            self._collections[(tenant, name)] = collection
        return collection

    def names(self, tenant: str) -> list[str]:
        """The tenant's collection names, sorted (with a shared backend, also those another
        replica created)."""
        if self.backend.shared:
            stored = {n for t, n in self.backend.stored(self.root) if t == tenant}
            for name in sorted(stored):
                if (tenant, name) not in self._collections:
                    self._open_existing(tenant, name)
            with self._lock:
                gone = [
                    (n, c)
                    for (t, n), c in self._collections.items()
                    if t == tenant and n not in stored and (t, n) not in self._reserved
                ]
            # dropped through another replica, unless created here after `stored` listed
            for name, collection in gone:
                if not self.backend.is_current(collection):
                    self._forget(tenant, name, collection)
        with self._lock:
            return sorted(name for t, name in self._collections if t == tenant)

    def all(self) -> list[tuple[str, Collection]]:
        """Every open collection with its tenant (for server-wide maintenance, never for RPCs)."""
        with self._lock:
            return [(tenant, c) for (tenant, _), c in sorted(self._collections.items())]

    def close(self) -> None:
        """Persist and close every collection."""
        with self._lock:
            collections = list(self._collections.values())
            self._collections.clear()
        for collection in collections:
            collection.close()
        self.backend.close()

    def require_file_maintenance(self, operation: str) -> None:
        """FailedPrecondition naming the tool to use when the backend has no `operation`."""
        refusal = self.backend.maintenance_refusal(operation)
        if refusal is not None:
            raise FailedPrecondition(refusal)
