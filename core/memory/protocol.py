"""`Memories`: what the pipeline and AddMemories use of a collection's long-term memories.

Two implementations, chosen by the collection's storage backend: `core.memory.store.MemoryStore`
(a SQLite file beside a local collection) and `core.milvus.memories.MilvusMemoryStore` (a Milvus
collection shared by every replica). Memories are only ever added.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from core.memory.records import MemoryDraft, ScoredMemory
from core.memory.scoring import DEFAULT_DECAY_RATE_PER_HOUR


class Memories(Protocol):
    """Long-term memories of one collection (thread-safe)."""

    def count(self) -> int:
        """Memories stored."""
        ...

    def add(
        self,
        memories: Sequence[MemoryDraft],
        embeddings: npt.NDArray[np.float32],
        now_ms: int | None = None,
    ) -> list[str]:
        """Store `memories` (durable when it returns); their ids ("memory-<n>") in order."""
        ...

    def search(
        self,
        query_vector: npt.NDArray[np.float32],
        query_keywords: Collection[str],
        now_ms: int,
        k: int,
        decay_rate: float = DEFAULT_DECAY_RATE_PER_HOUR,
        min_relevance: float = 0.0,
    ) -> list[ScoredMemory]:
        """The `k` best memories by score, best first (see `MemoryStore.search`)."""
        ...

    def close(self) -> None:
        """Release what the store holds."""
        ...
