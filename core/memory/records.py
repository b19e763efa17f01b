"""Long-term memory value objects: a memory to store, a stored memory, and a scored match."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT_IMPORTANCE = 0.5
MEMORY_ID_PREFIX = "memory-"


def memory_id_for(number: int) -> str:
    """The public id of memory number `number`: "memory-<number>"."""
    return f"{MEMORY_ID_PREFIX}{number}"


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """A memory as the caller sent it, before it is stored.

    `importance` is in (0, 1]; `timestamp_ms` is when the memory was formed (Unix time in
    milliseconds; None means the time it is stored).
    """

    text: str
    importance: float = DEFAULT_IMPORTANCE
    timestamp_ms: int | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Memory:
    """A stored memory. `number` comes from AUTOINCREMENT and is never reused."""

    number: int
    text: str
    importance: float
    timestamp_ms: int
    metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def memory_id(self) -> str:
        """The public id, "memory-<number>"."""
        return memory_id_for(self.number)


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    """A memory matched by a search, with the parts of its score.

    `score = importance * retention * (0.3 + 0.7 * relevance)`; see `core.memory.scoring`.
    """

    memory: Memory
    score: float
    relevance: float
    retention: float
    cosine: float
    keyword_overlap: float
