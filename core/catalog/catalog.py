"""The set of collections under a data directory."""

from __future__ import annotations

import logging
import shutil
import threading
from pathlib import Path

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig, validate_collection_name
from core.errors import AlreadyExists, NotFound

logger = logging.getLogger(__name__)

COLLECTIONS_DIR = "collections"


class CollectionCatalog:
    """Opens, creates and drops collections; one directory per collection."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / COLLECTIONS_DIR
        self._collections: dict[str, Collection] = {}
        self._lock = threading.Lock()

    def open_all(self) -> None:
        """Open every collection on disk, replaying or rebuilding derived indexes as needed."""
        self.root.mkdir(parents=True, exist_ok=True)
        for directory in sorted(p for p in self.root.iterdir() if p.is_dir()):
            if directory.name.startswith("."):
                continue
            try:
                collection = Collection.open(directory.name, directory, None)
            except FileNotFoundError:
                logger.warning("skipping %s: not a collection directory", directory)
                continue
            with self._lock:
                self._collections[directory.name] = collection
            logger.info("opened collection %s", directory.name)

    def create(self, name: str, config: CollectionConfig) -> Collection:
        """Create an empty collection; AlreadyExists if the name is taken."""
        validate_collection_name(name, "name")
        with self._lock:
            if name in self._collections:
                raise AlreadyExists(f"collection {name!r} already exists")
            directory = self.root / name
            if directory.exists():
                shutil.rmtree(directory)
            collection = Collection.open(name, directory, config)
            self._collections[name] = collection
        logger.info("created collection %s", name)
        return collection

    def get(self, name: str) -> Collection:
        """The open collection named `name`; NotFound otherwise."""
        with self._lock:
            collection = self._collections.get(name)
        if collection is None:
            raise NotFound(
                f"collection {name!r} does not exist; create it with CreateCollection "
                "or list collections with ListCollections"
            )
        return collection

    def get_or_create(self, name: str, config: CollectionConfig) -> Collection:
        """The collection named `name`, created with `config` if missing."""
        try:
            return self.get(name)
        except NotFound:
            try:
                return self.create(name, config)
            except AlreadyExists:
                return self.get(name)

    def drop(self, name: str) -> int:
        """Delete a collection and its directory; returns how many documents it held."""
        with self._lock:
            collection = self._collections.pop(name, None)
        if collection is None:
            raise NotFound(f"collection {name!r} does not exist")
        with collection.write_lock:
            documents, _ = collection.store.counts()
        collection.close()
        shutil.rmtree(collection.directory, ignore_errors=True)
        logger.info("dropped collection %s (%d documents)", name, documents)
        return documents

    def names(self) -> list[str]:
        """Collection names, sorted."""
        with self._lock:
            return sorted(self._collections)

    def close(self) -> None:
        """Persist and close every collection."""
        with self._lock:
            collections = list(self._collections.values())
            self._collections.clear()
        for collection in collections:
            collection.close()
