"""One collection: the SQLite store (truth) and the FAISS and Tantivy indexes derived from it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.catalog.collection_config import CollectionConfig
from core.dense import CorruptIndexFile, FaissIndex
from core.lexical.tantivy_index import TantivyIndex
from core.models import Chunk
from core.store.sqlite_store import DeleteResult, LexicalRow, SqliteStore

logger = logging.getLogger(__name__)

STORE_FILE = "store.sqlite3"
DENSE_DIR = "dense"
LEXICAL_DIR = "lexical"
CONFIG_KEY = "collection_config"


@dataclass(frozen=True, slots=True)
class CollectionFigures:
    """Sizes and index positions of a collection."""

    documents: int
    chunks: int
    sequence: int
    dense_sequence: int
    lexical_sequence: int
    dense_vectors: int
    dense_memory_bytes: int
    disk_bytes: int


class Collection:
    """A collection directory opened for reading and writing.

    Writers hold `write_lock` for a whole batch; the dense index is guarded by its own lock
    because FAISS indexes are not safe for concurrent add and search.
    """

    def __init__(
        self,
        name: str,
        directory: Path,
        store: SqliteStore,
        dense: FaissIndex,
        lexical: TantivyIndex,
        config: CollectionConfig,
    ) -> None:
        self.name = name
        self.directory = directory
        self.store = store
        self.config = config
        self.write_lock = threading.Lock()
        self._dense = dense
        self._dense_lock = threading.RLock()
        self._dense_sequence = store.sequence()
        self._lexical = lexical

    @classmethod
    def open(cls, name: str, directory: Path, new_config: CollectionConfig | None) -> Collection:
        """Open (or, with `new_config`, create) a collection and bring its indexes up to date."""
        directory.mkdir(parents=True, exist_ok=True)
        store = SqliteStore.open(directory / STORE_FILE)
        stored = store.get_meta(CONFIG_KEY)
        if stored is None:
            if new_config is None:
                store.close()
                raise FileNotFoundError(f"{directory} holds no collection")
            store.set_meta(CONFIG_KEY, new_config.to_json())
            config = new_config
        else:
            config = CollectionConfig.from_json(stored)
        dense = _load_dense(directory / DENSE_DIR, store, config)
        lexical = _load_lexical(directory / LEXICAL_DIR, store)
        return cls(name, directory, store, dense, lexical, config)

    def apply_upsert(
        self,
        added_row_ids: Sequence[int],
        vectors: np.ndarray,
        removed_row_ids: Sequence[int],
        lexical_rows: Sequence[LexicalRow],
    ) -> None:
        """Mirror one committed store change into both derived indexes (lexical not yet committed)."""
        with self._dense_lock:
            if removed_row_ids:
                self._dense.remove(np.asarray(removed_row_ids, dtype=np.int64))
            if added_row_ids:
                self._dense.add(np.asarray(added_row_ids, dtype=np.int64), vectors)
        if removed_row_ids:
            self._lexical.remove(list(removed_row_ids))
        if lexical_rows:
            self._lexical.add(lexical_rows)

    def commit_indexes(self, sequence: int, persist_dense: bool = True) -> None:
        """Commit the lexical index at `sequence` and (optionally) write the dense index to disk."""
        self._lexical.commit(sequence)
        with self._dense_lock:
            self._dense_sequence = sequence
            if persist_dense:
                self._dense.save(self.directory / DENSE_DIR, sequence)

    def delete_documents(self, document_ids: Sequence[str]) -> DeleteResult:
        """Delete documents from the store (durable on return) and from both indexes."""
        with self.write_lock:
            result = self.store.delete_documents(document_ids)
            if result.removed_row_ids:
                self.apply_upsert(
                    (),
                    np.empty((0, self.config.embedding_dim), np.float32),
                    result.removed_row_ids,
                    (),
                )
            if result.deleted:
                self.commit_indexes(result.seq)
            return result

    def dense_search(
        self, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, row ids) for float32 (q, d) normalised queries; exact within `allowed`."""
        with self._dense_lock:
            if allowed is not None:
                return self._dense.search_subset(queries, k, allowed)
            return self._dense.search(queries, k)

    def lexical_search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top-k (row id, BM25 score) for the query text."""
        return self._lexical.search(query, k)

    def get_chunks(self, row_ids: Sequence[int]) -> dict[int, Chunk]:
        """Live chunks by row id; deleted ids are absent."""
        return self.store.get_chunks(row_ids)

    def figures(self) -> CollectionFigures:
        """Current sizes for Stats."""
        documents, chunks = self.store.counts()
        with self._dense_lock:
            vectors, memory = self._dense.ntotal, self._dense.memory_bytes()
            dense_sequence = self._dense_sequence
        disk = sum(p.stat().st_size for p in self.directory.rglob("*") if p.is_file())
        return CollectionFigures(
            documents=documents,
            chunks=chunks,
            sequence=self.store.sequence(),
            dense_sequence=dense_sequence,
            lexical_sequence=self._lexical.sequence(),
            dense_vectors=vectors,
            dense_memory_bytes=memory,
            disk_bytes=disk,
        )

    def close(self) -> None:
        """Persist the dense index and release files."""
        with self.write_lock:
            with self._dense_lock:
                self._dense.save(self.directory / DENSE_DIR, self.store.sequence())
            self._lexical.close()
            self.store.close()


def _load_dense(directory: Path, store: SqliteStore, config: CollectionConfig) -> FaissIndex:
    sequence = store.sequence()
    try:
        loaded = FaissIndex.load(directory)
    except CorruptIndexFile:
        logger.warning("dense index in %s is unreadable; rebuilding it from the store", directory)
        loaded = None
    if loaded is not None and loaded[1] == sequence:
        return loaded[0]
    logger.info(
        "rebuilding dense index in %s (index at %s, store at %s)",
        directory,
        None if loaded is None else loaded[1],
        sequence,
    )
    index = FaissIndex.create(config.dense, config.embedding_dim)
    for row_ids, vectors in store.iter_live_vectors(max_seq=sequence):
        index.add(row_ids, vectors)
    index.save(directory, sequence)
    return index


def _load_lexical(directory: Path, store: SqliteStore) -> TantivyIndex:
    index = TantivyIndex.open(directory)
    sequence = store.sequence()
    if index.sequence() == sequence:
        return index
    logger.info(
        "rebuilding lexical index in %s (index at %s, store at %s)",
        directory,
        index.sequence(),
        sequence,
    )
    index.clear()
    for rows in store.iter_live_texts(max_seq=sequence):
        index.add(rows)
    index.commit(sequence)
    return index
