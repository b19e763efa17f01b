"""Long-term memories of a collection: storage, scoring, and fusion into retrieval hits."""

from __future__ import annotations

from core.memory.hits import memory_hits, merge_memories
from core.memory.records import Memory, MemoryDraft, ScoredMemory, memory_id_for
from core.memory.scoring import DEFAULT_DECAY_RATE_PER_HOUR
from core.memory.store import MEMORY_FILE, MemoryStore
from core.memory.validation import MAX_TEXT_CHARS, validate_memories

__all__ = [
    "DEFAULT_DECAY_RATE_PER_HOUR",
    "MAX_TEXT_CHARS",
    "MEMORY_FILE",
    "Memory",
    "MemoryDraft",
    "MemoryStore",
    "ScoredMemory",
    "memory_hits",
    "memory_id_for",
    "merge_memories",
    "validate_memories",
]
