"""`FollowingCollection`: a collection another process writes, opened read-only, that follows it.

Several server processes serve one data directory (server.processes): the primary is the only
writer; every other process opens the collections with `FollowingCollection.open_following`
(no file is created, replaced or removed) and calls `catch_up()` before each read. Catching up
reads the store's sequence (one SQLite read); when the writer moved on it replays the change
log into the in-memory dense index (the replay that opening uses, `index_build`), evicts the
deleted rows from the store's chunk caches, reloads the lexical reader at the writer's last
Tantivy commit, and loads added memories.

The writer commits the store before its indexes, so the lexical index may lag the store by the
write in progress. `version()` therefore names the sequence both indexes hold (the lower one),
not the store's: a result is cached at a version whose indexes it was computed from, and once a
write is acknowledged (its lexical commit and sequence file written) every later catch-up moves
the version past it. Deleted rows never come back through a lagging index either: chunks are read
from the store, which holds live rows only, after the caches were evicted.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from core.catalog import index_build, replay
from core.catalog.collection import (
    CONFIG_KEY,
    LEXICAL_DIR,
    MEMORIES_FILE,
    STORE_FILE,
    Collection,
    dense_dir_name,
)
from core.catalog.collection_config import CollectionConfig
from core.catalog.version import INCARNATION_KEY, CollectionVersion
from core.errors import FailedPrecondition
from core.lexical.tantivy_index import TantivyIndex
from core.memory.protocol import Memories
from core.memory.store import MemoryStore
from core.store.records import DeleteResult, PreparedDocument, UpsertResult
from core.store.sqlite_store import SqliteStore

logger = logging.getLogger(__name__)

READ_ONLY = "this server process only reads; writes go to the primary process"


class FollowingCollection(Collection):
    """A read-only `Collection` that follows the writes of the process owning it."""

    store: SqliteStore
    store_identity: tuple[int, int]
    """(device, inode) of the store file opened: a drop, re-create or restore replaces it."""
    _follow_lock: threading.Lock

    @classmethod
    def open_following(cls, name: str, directory: Path, device: str) -> FollowingCollection:
        """Open the collection in `directory` without writing anything; FileNotFoundError when
        it holds no finished collection (missing, or its creation is still in progress)."""
        path = directory / STORE_FILE
        identity = _identity(path)
        try:
            store = SqliteStore.open_existing(path)
        except sqlite3.DatabaseError as exc:  # removed while opening (a drop)
            raise FileNotFoundError(f"{path} cannot be opened: {exc}") from None
        try:
            raw = store.get_meta(CONFIG_KEY)
            if raw is None or store.get_meta(INCARNATION_KEY) is None:
                raise FileNotFoundError(f"{directory} holds no collection yet")
            config = CollectionConfig.from_json(raw)
            lexical = TantivyIndex.open_read_only(directory / LEXICAL_DIR)  # none yet: not found
            dense, dense_report = replay.load_dense(
                directory / dense_dir_name(config),
                store,
                config.dense,
                config.embedding_dim,
                device,
                save=False,
            )
        except BaseException:
            store.close()
            raise
        at = lexical.sequence()
        lexical_report = replay.IndexOpenReport("lexical", replay.IndexAction.UP_TO_DATE, at, at)
        collection = cls(
            name,
            directory,
            store,
            dense,
            lexical,
            config,
            replay.OpenReport(dense_report, lexical_report),
            device=device,
            memories=_existing_memories(directory / MEMORIES_FILE),
        )
        collection.store_identity = identity
        collection._dense_sequence = dense_report.store_sequence
        collection._follow_lock = threading.Lock()
        return collection

    def catch_up(self) -> None:
        """Apply what the writer committed since the last call (see the module docstring)."""
        sequence = self.store.sequence()
        if sequence != self._dense_sequence or self._lexical.sequence() < sequence:
            with self._follow_lock:
                self._follow(self.store.sequence())
        with self._memories_lock:
            memories = self._memories
        if isinstance(memories, MemoryStore):
            memories.catch_up()

    def _follow(self, sequence: int) -> None:
        """Bring the dense index and the row caches to `sequence`, and the lexical reader to
        the writer's last commit; under `_follow_lock`."""
        if sequence > self._dense_sequence:
            changes = replay.changes_to_replay(self.store, self._dense_sequence, sequence)
            if changes is None:  # compaction pruned the log: rebuild from the live rows
                self.store.forget_all_rows()
                engine = index_build.build_dense(
                    self.store, self.config.dense, self.config.embedding_dim, sequence, self.device
                )
                with self._dense_lock:
                    self._engine = engine
                    self._dense_sequence = sequence
            else:
                net = index_build.net_change(changes)
                self.store.forget_rows(net.removed)
                with self._dense_lock:
                    index_build.replay_dense(self._dense, self.store, net)
                    self._dense_sequence = sequence
        lexical = self._lexical
        if lexical.sequence() < sequence and isinstance(lexical, TantivyIndex):
            try:
                lexical.refresh()
            except (ValueError, OSError):  # its directory was swapped (compaction): reopen
                logger.info("reopening the lexical index of %s", self.name, exc_info=True)
                self._lexical = TantivyIndex.open_read_only(self.directory / LEXICAL_DIR)

    def version(self) -> CollectionVersion:
        """The contents the indexes hold: incarnation, the lower of the dense and lexical
        sequences, and memories."""
        with self._dense_lock:
            dense = self._dense_sequence
        indexed = min(dense, self._lexical.sequence())
        return CollectionVersion(self.incarnation, indexed, self.memory_count())

    def commit(
        self, prepared: Sequence[PreparedDocument], tuned_model: str | None = None
    ) -> list[UpsertResult | None]:
        """Refused: only the primary process writes."""
        raise FailedPrecondition(READ_ONLY)

    def delete_documents(self, document_ids: Sequence[str]) -> DeleteResult:
        """Refused: only the primary process writes."""
        raise FailedPrecondition(READ_ONLY)

    def checkpoint(self) -> int:
        """Refused: only the primary process writes."""
        raise FailedPrecondition(READ_ONLY)

    def close(self) -> None:
        """Release the files (nothing is saved: the writer owns them)."""
        with self._dense_lock:
            self._lexical.close()
            self.store.close()
        with self._memories_lock:
            if self._memories is not None:
                self._memories.close()
                self._memories = None


def _identity(path: Path) -> tuple[int, int]:
    """(device, inode) of `path`; FileNotFoundError when it does not exist."""
    status = os.stat(path)
    return status.st_dev, status.st_ino


def store_identity(directory: Path) -> tuple[int, int] | None:
    """(device, inode) of the store file in `directory` now; None when there is none."""
    try:
        return _identity(directory / STORE_FILE)
    except FileNotFoundError:
        return None


def _existing_memories(path: Path) -> Callable[[bool], Memories | None]:
    """The writer's memory store at `path` once it exists; never created here."""

    def open_memories(create: bool) -> Memories | None:
        if not path.exists():
            if create:
                raise FailedPrecondition(READ_ONLY)
            return None
        return MemoryStore.open(path)

    return open_memories
