"""`MemoryStore`: a collection's long-term memories in their own SQLite file, searched in memory.

The file (`memories.sqlite3` beside the collection's store) is the truth; on open every memory
is loaded into a `MemoryIndex` that `search` scans exactly (brute-force cosine).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from core.memory.index import MemoryIndex
from core.memory.records import Memory, MemoryDraft, ScoredMemory
from core.memory.scoring import DEFAULT_DECAY_RATE_PER_HOUR
from core.memory.validation import validate_memories

MEMORY_FILE = "memories.sqlite3"
EMBEDDING_DIM_KEY = "embedding_dim"

_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=FULL",
    "PRAGMA busy_timeout=10000",
)
_DDL = """
CREATE TABLE IF NOT EXISTS memories (
    number        INTEGER PRIMARY KEY AUTOINCREMENT,
    text          TEXT NOT NULL,
    importance    REAL NOT NULL CHECK (importance > 0 AND importance <= 1),
    timestamp_ms  INTEGER NOT NULL,
    metadata_json TEXT NOT NULL,
    embedding     BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
_INSERT = (
    "INSERT INTO memories (text, importance, timestamp_ms, metadata_json, embedding) "
    "VALUES (?, ?, ?, ?, ?)"
)


class MemoryStore:
    """Long-term memories of one collection (WAL, synchronous=FULL).

    Thread-safe: one connection and the in-memory copy behind one lock. `add` is one
    transaction and durable when it returns; memory numbers are never reused.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path, index: MemoryIndex) -> None:
        self._connection = connection
        self._path = path
        self._lock = threading.RLock()
        self._index = index

    @classmethod
    def open(cls, path: Path) -> MemoryStore:
        """Open (creating file and schema when missing) the memory database at `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        for pragma in _PRAGMAS:
            connection.execute(pragma)
        connection.executescript(_DDL)
        rows = connection.execute(
            "SELECT number, text, importance, timestamp_ms, metadata_json, embedding "
            "FROM memories ORDER BY number"
        ).fetchall()
        index = MemoryIndex()
        if rows:
            vectors = np.stack([np.frombuffer(row[5], dtype=np.float32) for row in rows])
            index.append([_memory(row) for row in rows], vectors)
        return cls(connection, path, index)

    def catch_up(self) -> int:
        """Load the memories another process added since this store was opened or last caught
        up (memories are only ever added); how many were loaded."""
        with self._lock:
            last = self._index.last_number()
            rows = self._connection.execute(
                "SELECT number, text, importance, timestamp_ms, metadata_json, embedding "
                "FROM memories WHERE number > ? ORDER BY number",
                (last,),
            ).fetchall()
            if rows:
                vectors = np.stack([np.frombuffer(row[5], dtype=np.float32) for row in rows])
                self._index.append([_memory(row) for row in rows], vectors)
            return len(rows)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    def count(self) -> int:
        """Memories stored."""
        with self._lock:
            return len(self._index)

    def add(
        self,
        memories: Sequence[MemoryDraft],
        embeddings: npt.NDArray[np.float32],
        now_ms: int | None = None,
    ) -> list[str]:
        """Store `memories` in one transaction; their ids ("memory-<n>") in order.

        `embeddings` is float32 (len(memories), d), from the embedder's `embed_documents`; rows
        are L2-normalised here. A memory without a timestamp gets `now_ms` (default: the clock).
        Raises `InvalidArgument` for invalid memories and `ValueError` for unusable embeddings.
        """
        validate_memories(memories, max_per_request=None)
        matrix = _normalised(embeddings, len(memories))
        stamp = int(time.time() * 1000) if now_ms is None else now_ms
        with self._lock:
            self._check_dimension(matrix.shape[1])
            added = self._insert(memories, matrix, stamp)
            self._index.append(added, matrix)
        return [memory.memory_id for memory in added]

    def search(
        self,
        query_vector: npt.NDArray[np.float32],
        query_keywords: Collection[str],
        now_ms: int,
        k: int,
        decay_rate: float = DEFAULT_DECAY_RATE_PER_HOUR,
        min_relevance: float = 0.0,
    ) -> list[ScoredMemory]:
        """The `k` best memories by score, best first (ties: older memory first).

        `query_vector` is float32 (d,) from `embed_queries`; `query_keywords` comes from
        `core.retrieve.keywords.extract_keywords(query)`; `decay_rate` is per hour (see
        `core.memory.scoring`). Memories whose relevance is below `min_relevance` are left out.
        """
        if k < 1 or not decay_rate >= 0:
            raise ValueError(f"need k >= 1 and decay_rate >= 0, got {k} and {decay_rate}")
        query = _normalised(np.asarray(query_vector).reshape(1, -1), 1)[0]
        with self._lock:
            dimension = self._index.dimension
            if dimension is not None and query.shape[0] != dimension:
                raise ValueError(
                    f"query vector has dimension {query.shape[0]}, memories have {dimension}"
                )
            return self._index.search(query, query_keywords, now_ms, k, decay_rate, min_relevance)

    def close(self) -> None:
        """Close the connection; the store is unusable afterwards."""
        with self._lock:
            self._connection.close()

    def _insert(
        self, memories: Sequence[MemoryDraft], matrix: npt.NDArray[np.float32], stamp: int
    ) -> list[Memory]:
        added: list[Memory] = []
        self._connection.execute("BEGIN IMMEDIATE")
        try:
            if not len(self._index):
                self._connection.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                    (EMBEDDING_DIM_KEY, str(matrix.shape[1])),
                )
            for draft, vector in zip(memories, matrix, strict=True):
                timestamp_ms = stamp if draft.timestamp_ms is None else draft.timestamp_ms
                metadata = dict(draft.metadata)
                cursor = self._connection.execute(
                    _INSERT,
                    (
                        draft.text,
                        float(draft.importance),
                        timestamp_ms,
                        json.dumps(metadata, sort_keys=True),
                        vector.tobytes(),
                    ),
                )
                assert cursor.lastrowid is not None
                added.append(
                    Memory(
                        cursor.lastrowid,
                        draft.text,
                        float(draft.importance),
                        timestamp_ms,
                        metadata,
                    )
                )
        except BaseException:
            self._connection.execute("ROLLBACK")
            raise
        self._connection.execute("COMMIT")
        return added

    def _check_dimension(self, dimension: int) -> None:
        row = self._connection.execute(
            "SELECT value FROM meta WHERE key = ?", (EMBEDDING_DIM_KEY,)
        ).fetchone()
        if row is not None and int(row[0]) != dimension:
            raise ValueError(f"embeddings have dimension {dimension}, the memories have {row[0]}")


def _memory(row: tuple[Any, ...]) -> Memory:
    number, text, importance, timestamp_ms, metadata_json, _ = row
    return Memory(
        int(number), str(text), float(importance), int(timestamp_ms), json.loads(metadata_json)
    )


def _normalised(embeddings: npt.NDArray[np.float32], count: int) -> npt.NDArray[np.float32]:
    """A float32 copy of `embeddings` (count, d) with unit rows; ValueError if that is impossible."""
    matrix = np.array(embeddings, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != count or matrix.shape[1] == 0:
        raise ValueError(f"embeddings must have shape ({count}, d), got {matrix.shape}")
    norms: npt.NDArray[np.float32] = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not (np.all(np.isfinite(norms)) and np.all(norms > 0)):
        raise ValueError("embeddings must be finite and non-zero")
    unit: npt.NDArray[np.float32] = matrix / norms
    return unit
