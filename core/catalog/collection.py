"""One collection: the store (truth) and the FAISS and Tantivy indexes derived from it."""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import numpy.typing as npt

from core.catalog import replay
from core.catalog.collection_config import CollectionConfig
from core.catalog.directory_swap import SWAP_PURPOSE, remove_stale_siblings, replace_directory
from core.catalog.version import INCARNATION_KEY, CollectionVersion, new_incarnation
from core.dense.combined_search import (
    Results,
    SearchCombiner,
    search_per_k,
    search_with_largest_k,
)
from core.dense.engine_factory import DenseEngine, DenseEngineName
from core.dense.protocol import DenseIndex
from core.embed.torch_tensors import host_float32
from core.errors import Conflict
from core.lexical.protocol import LexicalIndex
from core.lexical.tantivy_index import TantivyIndex
from core.memory.protocol import Memories
from core.memory.store import MemoryStore
from core.models import Chunk, RiskLevel
from core.retrieve.filters import ChunkFilter
from core.store.protocol import FilteredScan, LocalStore, Store
from core.store.records import (
    DeleteResult,
    LexicalRow,
    PreparedDocument,
    SectionVectors,
    UpsertResult,
)
from core.store.sqlite_store import SqliteStore

if TYPE_CHECKING:  # a tensor comes only from a GPU embedder, which loaded torch
    import torch

logger = logging.getLogger(__name__)

Queries: TypeAlias = "npt.NDArray[np.float32] | torch.Tensor"
_LARGEST_K_ENGINES = frozenset({DenseEngineName.FAISS_FLAT, DenseEngineName.FAISS_IVF_FLAT})
"""Engines whose top-k is the prefix of their top-K for K > k: one combined call takes max k."""
_COMBINED_ENGINES = _LARGEST_K_ENGINES | {DenseEngineName.FAISS_HNSW, DenseEngineName.FAISS_AUTO}
"""Engines whose single-query searches are combined (HNSW, and "auto" which may be a graph: one
call per distinct k, since a graph widens its candidate list with k)."""

STORE_FILE = "store.sqlite3"
MEMORIES_FILE = "memories.sqlite3"
DENSE_DIR = "dense"
LEXICAL_DIR = "lexical"
CONFIG_KEY = "collection_config"
TUNED_DENSE_PREFIX = "dense-"
"""A collection re-embedded with a tuned model keeps its dense index in `dense-<model id>/`, so
the index on disk always belongs to the model the store's config names (core/tune)."""
MODELS_DIR = "models"
"""Tuned embedding models of the collection, one sentence-transformers directory per id."""
COMPACT_PURPOSE = "compact"
"""`directory_swap.sibling_temp` purpose of a lexical index being built by compaction."""


@dataclass(frozen=True, slots=True)
class DensePersistPolicy:
    """When a commit also writes the dense index to disk, bounding the replay after a crash.

    A commit saves it once `max_changes` changes or `max_interval_s` seconds (checked at commits)
    have passed since the last save. Saving rewrites the whole index file, so small values trade
    write amplification for a shorter replay on open.
    """

    max_changes: int = 1000
    max_interval_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_changes < 1:
            raise ValueError(f"max_changes must be >= 1, got {self.max_changes}")
        if self.max_interval_s < 0:
            raise ValueError(f"max_interval_s must be >= 0, got {self.max_interval_s}")


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
    dense_tombstones: int = 0
    dense_saved_sequence: int = 0


class Collection:
    """A collection directory opened for reading and writing; the one owner of its writes.

    Every write goes through `commit` (prepared documents) or `delete_documents`, which hold
    `write_lock` only for the short commit protocol: store rows and link edges in one
    transaction, then both derived indexes, then the version (`version()`: incarnation and
    store sequence). Parsing, chunking, link extraction and embedding happen before, outside
    any lock (`core.indexer`). Compaction and snapshots hold `write_lock` too; the dense index
    is guarded by its own lock because FAISS indexes are not safe for concurrent add and search. `open_report` says
    how the derived indexes were brought up to date when the collection was opened.
    `device` is the torch device dense engines are built for ("cpu", "cuda", "cuda:N"); the
    engine factory decides what runs there (`dense_engine`, `dense_device`).
    """

    def __init__(
        self,
        name: str,
        directory: Path,
        store: Store,
        dense: DenseEngine,
        lexical: LexicalIndex,
        config: CollectionConfig,
        open_report: replay.OpenReport | None = None,
        persist_policy: DensePersistPolicy | None = None,
        device: str = "cpu",
        memories: MemoryOpener | None = None,
    ) -> None:
        """The store must hold an incarnation (`Collection.open` mints one when it has none).

        `memories` opens the collection's long-term memories (its storage backend supplies
        it; default: `memories.sqlite3` in `directory`)."""
        self.name = name
        self.device = device
        self.directory = directory
        self.store = store
        self.config = config
        self.open_report = open_report
        self.persist_policy = persist_policy or DensePersistPolicy()
        self.write_lock = threading.Lock()
        self._engine = dense
        self._dense_lock = threading.RLock()
        self._combined = SearchCombiner(self._dense_lock, self._search_rows)
        self._dense_sequence = store.sequence()
        saved = None if open_report is None else open_report.dense
        self._dense_saved_sequence = self._dense_sequence if saved is None else _saved_at(saved)
        self._dense_saved_at = time.monotonic()
        self._lexical: LexicalIndex = lexical
        self._memories: Memories | None = None
        self._open_memories = memories or _local_memories(directory / MEMORIES_FILE)
        self._memories_lock = threading.Lock()
        self._writes_blocked = (
            ""  # why writes are refused for now ("" = they are not); under write_lock
        )
        self._sequence_before_write: int | None = None  # see `_indexes_pending`
        incarnation = store.get_meta(INCARNATION_KEY)
        if incarnation is None:
            raise ValueError(f"{directory} has no incarnation; open it with Collection.open")
        self.incarnation = incarnation

    @classmethod
    def open(
        cls,
        name: str,
        directory: Path,
        new_config: CollectionConfig | None,
        persist_policy: DensePersistPolicy | None = None,
        device: str = "cpu",
        new_contents: bool = False,
    ) -> Collection:
        """Open (or, with `new_config`, create) a collection and bring its indexes up to date.

        `device`: where dense engines are built ("cpu", "cuda", "cuda:N"; see engine_factory).
        A new incarnation is minted and stored when the collection is created, when
        `new_contents` says its files were just replaced (a restore), or when it has none yet.
        """
        directory.mkdir(parents=True, exist_ok=True)
        store: LocalStore = SqliteStore.open(directory / STORE_FILE)
        try:
            config = settle_config(store, new_config, new_contents)
        except FileNotFoundError:
            store.close()
            raise FileNotFoundError(f"{directory} holds no collection") from None
        for purpose in (COMPACT_PURPOSE, SWAP_PURPOSE):
            remove_stale_siblings(directory / LEXICAL_DIR, purpose)
        remove_unused_model_files(directory, config)
        try:
            dense, dense_report = replay.load_dense(
                directory / dense_dir_name(config),
                store,
                config.dense,
                config.embedding_dim,
                device,
            )
            lexical, lexical_report = replay.load_lexical(directory / LEXICAL_DIR, store)
        except BaseException:
            store.close()
            raise
        report = replay.OpenReport(dense_report, lexical_report)
        collection = cls(
            name, directory, store, dense, lexical, config, report, persist_policy, device
        )
        with collection._dense_lock:
            collection._persist_dense_if_due(dense_report.store_sequence)
        return collection

    def commit(
        self, prepared: Sequence[PreparedDocument], tuned_model: str | None = None
    ) -> list[UpsertResult | None]:
        """Commit prepared documents, each durable on return; per document its result, or None
        when the store already holds that content hash (an idempotent repeat). `tuned_model`:
        the collection's `config.tuned_model` the vectors were computed for (Conflict when a tune
        changed it meanwhile); None skips that check.

        Under `write_lock`, one protocol: each document's rows and link edges in one store
        transaction, mirrored into the dense and lexical indexes; then the lexical index is
        committed at the new sequence and the dense index saved when its policy says so.
        """
        results: list[UpsertResult | None] = []
        with self.write_lock, self._indexes_pending():
            self._require_writable()
            if tuned_model is not None and tuned_model != self.config.tuned_model:
                raise Conflict(
                    f"collection {self.name!r} switched to another embedding model while these "
                    "documents were embedded (a tune finished); send them again"
                )
            for item in prepared:
                document = item.document
                if self.store.document_hash(document.document_id) == item.content_hash:
                    results.append(None)
                    continue
                result = self.store.upsert_document(
                    document,
                    item.content_hash,
                    item.chunks,
                    item.embeddings,
                    item.risks,
                    links=item.links,
                    sections=item.sections,
                )
                rows = [
                    LexicalRow(row_id, chunk.text, document.title, " / ".join(chunk.section_path))
                    for row_id, chunk in zip(result.added_row_ids, item.chunks, strict=True)
                ]
                self._mirror(result.added_row_ids, item.embeddings, result.removed_row_ids, rows)
                results.append(result)
            committed = [r.seq for r in results if r is not None]
            if committed:
                self._commit_indexes(max(committed), persist_dense=False)
        return results

    def delete_documents(self, document_ids: Sequence[str]) -> DeleteResult:
        """Delete documents from the store (durable on return) and from both indexes."""
        with self.write_lock, self._indexes_pending():
            self._require_writable()
            result = self.store.delete_documents(document_ids)
            if result.removed_row_ids:
                self._mirror(
                    (),
                    np.empty((0, self.config.embedding_dim), np.float32),
                    result.removed_row_ids,
                    (),
                )
            if result.deleted:
                self._commit_indexes(result.seq, persist_dense=False)
            return result

    def checkpoint(self) -> int:
        """Write the dense index to disk at the current sequence (shortening the replay after a
        crash; the store alone already holds every committed write); that sequence."""
        with self.write_lock:
            sequence = self.store.sequence()
            self._commit_indexes(sequence, persist_dense=True)
            return sequence

    @contextmanager
    def writes_blocked(self, reason: str) -> Iterator[None]:
        """Refuse upserts and deletes with Conflict(`reason`) until the block ends (a tune
        re-embedding a snapshot of the collection); searches go on."""
        with self.write_lock:
            self._writes_blocked = reason
        try:
            yield
        finally:
            with self.write_lock:
                self._writes_blocked = ""

    def _require_writable(self) -> None:
        if self._writes_blocked:
            raise Conflict(self._writes_blocked)

    @property
    def dense_directory(self) -> Path:
        """Where the dense index of the collection's current model is saved."""
        return self.directory / dense_dir_name(self.config)

    def adopt_embeddings(
        self,
        tuned_model: str,
        row_ids: npt.NDArray[np.int64],
        vectors: npt.NDArray[np.float32],
        dense: DenseEngine,
        sequence: int,
        before_commit: Callable[[], None] = lambda: None,
        sections: Sequence[tuple[str, SectionVectors]] = (),
    ) -> None:
        """Switch the collection to the tuned model `tuned_model` (a directory under `models/`):
        `vectors` (float32 (n, d)) replace the stored vector of every live chunk `row_ids`
        (int64 (n,)), `sections` (document id, its section vectors) the section vectors of every
        live document when the collection keeps them (`config.section_vectors`), and `dense`
        (built from `vectors` at `sequence`) replaces the dense index.

        The caller holds `write_lock` and the store must still be at `sequence` (Conflict
        otherwise). The new dense index is saved beside the old one (`dense-<id>/`) first; then
        one store transaction writes the chunk and section vectors, the config naming the model
        and a new incarnation (cached results of the old model become stale): the commit point.
        A crash before it leaves the old config and vectors (both kinds) and index (the new
        files are removed on open); after it, the new ones. `before_commit` runs just before
        that transaction (tests crash there). Searches use the old index until the swap in
        memory; the store's section-vector LRU is emptied inside the transaction.
        """
        if self.store.sequence() != sequence:
            raise Conflict(
                f"collection {self.name!r} changed while it was re-embedded; tune it again"
            )
        if self.config.section_vectors and len(row_ids) and not sections:
            raise ValueError(
                f"collection {self.name!r} keeps section vectors: re-embed them with the chunks"
            )
        config = replace(self.config, tuned_model=tuned_model)
        directory = self.directory / dense_dir_name(config)
        old_directory = self.dense_directory
        dense.index.save(directory, sequence)
        before_commit()
        incarnation = new_incarnation()
        meta = {CONFIG_KEY: config.to_json(), INCARNATION_KEY: incarnation}
        self.store.replace_embeddings(row_ids, vectors, meta, sections)
        with self._dense_lock:
            self._engine = dense
            self.config = config
            self.incarnation = incarnation
            self._dense_sequence = sequence
            self._dense_saved_sequence = sequence
            self._dense_saved_at = time.monotonic()
        if old_directory != directory:
            shutil.rmtree(old_directory, ignore_errors=True)

    def _mirror(
        self,
        added_row_ids: Sequence[int],
        vectors: np.ndarray,
        removed_row_ids: Sequence[int],
        lexical_rows: Sequence[LexicalRow],
    ) -> None:
        """Mirror one committed store change into both derived indexes (lexical not yet
        committed); under `write_lock`."""
        with self._dense_lock:
            if removed_row_ids:
                self._dense.remove(np.asarray(removed_row_ids, dtype=np.int64))
            if added_row_ids:
                self._dense.add(np.asarray(added_row_ids, dtype=np.int64), vectors)
        if removed_row_ids:
            self._lexical.remove(list(removed_row_ids))
        if lexical_rows:
            self._lexical.add(lexical_rows)

    def _commit_indexes(self, sequence: int, persist_dense: bool) -> None:
        """Commit the lexical index at `sequence`; write the dense index to disk when
        `persist_dense` is set or `persist_policy` says a save is due; under `write_lock`."""
        self._lexical.commit(sequence)
        with self._dense_lock:
            self._dense_sequence = sequence
            if persist_dense:
                self._save_dense(sequence)
            else:
                self._persist_dense_if_due(sequence)

    def catch_up(self) -> None:
        """Apply what another process wrote since the last call: nothing here, this process
        writes the collection (core.catalog.following_collection follows one)."""

    def version(self) -> CollectionVersion:
        """The contents now: incarnation, store sequence and memories (read before a retrieval,
        it names what the result was computed from). While a write of this process is between
        its store commit and its index commits, the sequence before that write: a result
        computed meanwhile from indexes without it is never cached under the write's sequence,
        which lookups reach once the write is acknowledged."""
        sequence = self.store.sequence()
        before = self._sequence_before_write  # read after the store: see `_indexes_pending`
        if before is not None:
            sequence = min(sequence, before)
        return CollectionVersion(self.incarnation, sequence, self.memory_count())

    @contextmanager
    def _indexes_pending(self) -> Iterator[None]:
        """Mark a write in progress (under `write_lock`): set before its store commit, cleared
        after its index commits, so `version()` (which reads the store first) never names a
        sequence whose indexes are not committed yet."""
        self._sequence_before_write = self.store.sequence()
        try:
            yield
        finally:
            self._sequence_before_write = None

    def dense_search(
        self, queries: Queries, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, row ids) for (q, d) normalised queries; exact within `allowed`.

        `queries` may be a torch tensor on `dense_device` (the GPU embedder's output, searched
        without leaving the device) when the engine is the torch engine; other engines get a
        float32 host copy. A single query over a FAISS CPU engine is combined with the others
        waiting for the index (`core.dense.combined_search`).
        """
        if allowed is None and k >= 1 and queries.shape[0] == 1:
            if self._engine.name in _COMBINED_ENGINES:  # re-read under the lock: `_search_rows`
                return self._combined.search(host_float32(queries), k)
        with self._dense_lock:
            engine = self._engine
            index = engine.index
            # the torch engine takes tensors where they are; the others get float32 host arrays
            on_torch = engine.name is DenseEngineName.TORCH_EXACT
            query = queries if on_torch else host_float32(queries)
            if allowed is not None:
                return index.search_subset(query, k, allowed)  # type: ignore[arg-type]
            return index.search(query, k)  # type: ignore[arg-type]

    def _search_rows(self, queries: np.ndarray, ks: Sequence[int]) -> list[Results]:
        """Combined single-query searches (float32 (m, d), each row's k) on the engine of now;
        under `_dense_lock`."""
        engine = self._engine
        search = engine.index.search
        if engine.name in _LARGEST_K_ENGINES:
            return search_with_largest_k(search, queries, ks)
        if engine.name in _COMBINED_ENGINES:
            return search_per_k(search, queries, ks)
        # swapped for an engine that does not combine since these were queued: one by one
        return [search(queries[i : i + 1], k) for i, k in enumerate(ks)]

    def lexical_search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top-k (row id, BM25 score) for the query text."""
        return self._lexical.search(query, k)

    @property
    def lexical_is_remote(self) -> bool:
        """Whether a lexical search waits on another server (Milvus) instead of running here."""
        return self._lexical.remote

    def get_chunks(self, row_ids: Sequence[int]) -> dict[int, Chunk]:
        """Live chunks by row id; deleted ids are absent."""
        return self.store.get_chunks(row_ids)

    def get_risk_levels(self, row_ids: Sequence[int]) -> dict[int, RiskLevel]:
        """The risk level of each live chunk among `row_ids`; deleted ids are absent."""
        return self.store.get_risk_levels(row_ids)

    def scan_chunks(self, chunk_filter: ChunkFilter) -> Iterator[list[Chunk]]:
        """Batches of live chunks that include every chunk `chunk_filter` admits (callers still
        apply `chunk_filter.matches`): narrowed by the store when it can evaluate filters
        (`FilteredScan`, e.g. Milvus), every live chunk otherwise."""
        if isinstance(self.store, FilteredScan):
            yield from self.store.iter_matching(chunk_filter)
            return
        for rows in self.store.iter_live_texts():
            yield list(self.get_chunks([row.row_id for row in rows]).values())

    @property
    def _dense(self) -> DenseIndex:
        """The engine's index (read under `_dense_lock`)."""
        return self._engine.index

    @property
    def dense_tombstones(self) -> int:
        """Removed vectors still held by the dense index (HNSW) until the next compaction."""
        with self._dense_lock:
            return self._dense.tombstone_count

    def save_dense_copy(self, directory: Path) -> int:
        """Write the dense index as it is now into `directory`; the sequence it holds.

        Hold `write_lock` so the index and the returned sequence match the store.
        """
        with self._dense_lock:
            self._dense.save(directory, self._dense_sequence)
            return self._dense_sequence

    def swap_indexes(self, dense: DenseEngine, lexical_build: Path, sequence: int) -> None:
        """Replace both derived indexes by ones built at `sequence`; the caller holds `write_lock`.

        `dense` is saved first (atomically); `lexical_build` is a closed Tantivy directory that
        takes the place of the lexical directory. Searches use the old indexes until the swap.
        """
        dense.index.save(self.dense_directory, sequence)
        lexical_dir = self.directory / LEXICAL_DIR
        self._lexical.close()  # its writer must let go before the directory moves
        try:
            replace_directory(lexical_build, lexical_dir)
        finally:
            self._lexical = TantivyIndex.open(lexical_dir)
        with self._dense_lock:
            self._engine = dense
            self._dense_sequence = sequence
            self._dense_saved_sequence = sequence
            self._dense_saved_at = time.monotonic()

    @property
    def dense_engine(self) -> str:
        """The dense engine serving searches, e.g. "faiss-hnsw" or "torch-exact"."""
        return str(self._engine.name)

    @property
    def dense_device(self) -> str:
        """Where dense searches run, e.g. "cpu" or "cuda:0"."""
        return self._engine.device

    @property
    def searches_on_device(self) -> bool:
        """True when dense search takes query tensors on a CUDA device (the torch engine there),
        so the retrieval pipeline hands it the embedder's output without a host copy.

        Read without `_dense_lock` (every Retrieve asks, and a search in flight holds that lock):
        `_engine` is replaced whole by a swap, never changed in place, so one read of it gives
        one engine's index and device."""
        engine = self._engine
        return engine.name is DenseEngineName.TORCH_EXACT and engine.device.startswith("cuda")

    def figures(self) -> CollectionFigures:
        """Current sizes for Stats."""
        documents, chunks = self.store.counts()
        with self._dense_lock:
            vectors, memory = self._dense.ntotal, self._dense.memory_bytes()
            dense_sequence, saved = self._dense_sequence, self._dense_saved_sequence
            tombstones = self._dense.tombstone_count
        return CollectionFigures(
            documents=documents,
            chunks=chunks,
            sequence=self.store.sequence(),
            dense_sequence=dense_sequence,
            lexical_sequence=self._lexical.sequence(),
            dense_vectors=vectors,
            dense_memory_bytes=memory,
            disk_bytes=directory_bytes(self.directory),
            dense_tombstones=tombstones,
            dense_saved_sequence=saved,
        )

    def close(self) -> None:
        """Persist the dense index (when it changed since its last save) and release files."""
        with self.write_lock:
            with self._dense_lock:
                sequence = self.store.sequence()
                if self._dense_saved_sequence != sequence or self._dense_sequence != sequence:
                    self._save_dense(sequence)
            self._lexical.close()
            self.store.close()
            with self._memories_lock:
                if self._memories is not None:
                    self._memories.close()
                    self._memories = None

    def memories(self) -> Memories:
        """The collection's long-term memories, opened on first use."""
        found = self._memories_if_any(create=True)
        assert found is not None
        return found

    def memory_count(self) -> int:
        """Stored memories, without creating a memory store when there is none."""
        found = self._memories_if_any(create=False)
        return 0 if found is None else found.count()

    def _memories_if_any(self, create: bool) -> Memories | None:
        with self._memories_lock:
            if self._memories is None:
                self._memories = self._open_memories(create)
            return self._memories

    def _persist_dense_if_due(self, sequence: int) -> None:
        if sequence == self._dense_saved_sequence:
            return
        policy = self.persist_policy
        changes_due = sequence - self._dense_saved_sequence >= policy.max_changes
        time_due = time.monotonic() - self._dense_saved_at >= policy.max_interval_s
        if changes_due or time_due:
            self._save_dense(sequence)

    def _save_dense(self, sequence: int) -> None:
        self._dense.save(self.dense_directory, sequence)
        self._dense_saved_sequence = sequence
        self._dense_saved_at = time.monotonic()
        logger.debug("saved dense index of %s at sequence %d", self.name, sequence)


MemoryOpener = Callable[[bool], Memories | None]
"""Opens a collection's memories; with False, None instead of creating an absent store."""


def _local_memories(path: Path) -> MemoryOpener:
    """The SQLite memory store at `path` (created on the first use that may create it)."""

    def open_memories(create: bool) -> Memories | None:
        return MemoryStore.open(path) if create or path.exists() else None

    return open_memories


def settle_config(
    store: Store, new_config: CollectionConfig | None, new_contents: bool
) -> CollectionConfig:
    """The collection's config, stored from `new_config` when the store has none (a create;
    FileNotFoundError without one); mints an incarnation at create, after a restore
    (`new_contents`) or when the store has none."""
    stored = store.get_meta(CONFIG_KEY)
    if stored is None:
        if new_config is None:
            raise FileNotFoundError("the store holds no collection")
        store.set_meta(CONFIG_KEY, new_config.to_json())
        config = new_config
    else:
        config = CollectionConfig.from_json(stored)
    if stored is None or new_contents or store.get_meta(INCARNATION_KEY) is None:
        store.set_meta(INCARNATION_KEY, new_incarnation())
    return config


def dense_dir_name(config: CollectionConfig) -> str:
    """The directory (under the collection's) holding the dense index of `config`'s model."""
    return f"{TUNED_DENSE_PREFIX}{config.tuned_model}" if config.tuned_model else DENSE_DIR


def remove_unused_model_files(directory: Path, config: CollectionConfig) -> None:
    """Delete dense indexes and tuned models that `config` does not name: what an interrupted
    or superseded tune left (run on open, before anything can be tuning)."""
    keep = dense_dir_name(config)
    for entry in directory.iterdir():
        dense_like = entry.name == DENSE_DIR or entry.name.startswith(TUNED_DENSE_PREFIX)
        if dense_like and entry.name != keep and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
            logger.warning(
                "removed %s: a dense index of a model the collection does not use", entry
            )
    models = directory / MODELS_DIR
    if models.is_dir():
        for entry in models.iterdir():
            if entry.name != config.tuned_model:
                shutil.rmtree(entry, ignore_errors=True)
                logger.warning("removed %s: a tuned model the collection does not use", entry)


def directory_bytes(directory: Path) -> int:
    """Total size in bytes of the regular files under `directory`."""
    total = 0
    for path in directory.rglob("*"):
        try:
            if path.is_file():
                total += path.stat().st_size
        except FileNotFoundError:  # removed while walking (a lexical merge, a temp file)
            continue
    return total


def _saved_at(report: replay.IndexOpenReport) -> int:
    """The sequence of the dense index file on disk after opening produced `report`."""
    if report.action is replay.IndexAction.REPLAYED and report.index_sequence is not None:
        return report.index_sequence
    return report.store_sequence
