"""`MemoryIndex`: the in-memory copy of a collection's memories that exact search scans.

Holds unit vectors, importance and timestamps as numpy arrays and an inverted index of keywords,
so a search is one matrix-vector product plus array arithmetic. Keywords are those of
`core.retrieve.keywords.extract_keywords`, for memory texts as for queries. Not thread-safe on
its own: `MemoryStore` guards it with its lock.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt

from core.memory.records import Memory, ScoredMemory
from core.memory.scoring import memory_scores
from core.retrieve.keywords import extract_keywords

FloatArray = npt.NDArray[np.float64]
VectorArray = npt.NDArray[np.float32]


class MemoryIndex:
    """Memories in insertion order with their vectors, for brute-force scoring."""

    def __init__(self) -> None:
        self._memories: list[Memory] = []
        self._postings: dict[str, list[int]] = {}
        self._pending: list[tuple[VectorArray, FloatArray, FloatArray]] = []
        self._vectors: VectorArray | None = None
        self._importance: FloatArray = np.zeros(0)
        self._timestamps: FloatArray = np.zeros(0)

    def __len__(self) -> int:
        return len(self._memories)

    def last_number(self) -> int:
        """The number of the last memory held (memories come in ascending numbers); 0 if none."""
        return self._memories[-1].number if self._memories else 0

    @property
    def dimension(self) -> int | None:
        """Width of the stored vectors; None while empty."""
        if self._vectors is not None:
            return int(self._vectors.shape[1])
        return int(self._pending[0][0].shape[1]) if self._pending else None

    def append(self, memories: Sequence[Memory], vectors: VectorArray) -> None:
        """Add `memories` with their float32 (len(memories), d) unit vectors."""
        start = len(self._memories)
        for offset, memory in enumerate(memories):
            for word in extract_keywords(memory.text):
                self._postings.setdefault(word, []).append(start + offset)
        self._memories.extend(memories)
        importance = np.array([m.importance for m in memories], dtype=np.float64)
        timestamps = np.array([m.timestamp_ms for m in memories], dtype=np.float64)
        self._pending.append((vectors, importance, timestamps))

    def search(
        self,
        query: VectorArray,
        query_keywords: Collection[str],
        now_ms: int,
        k: int,
        decay_rate: float,
        min_relevance: float,
    ) -> list[ScoredMemory]:
        """The `k` best memories by score, best first, ties to the earlier memory; `query` is a
        float32 (d,) unit vector."""
        if not self._memories:
            return []
        self._merge_pending()
        assert self._vectors is not None
        cosine = (self._vectors @ query).astype(np.float64)
        overlap = self._overlap(query_keywords)
        scores, related, kept = memory_scores(
            self._importance, self._timestamps, cosine, overlap, now_ms, decay_rate
        )
        candidates = np.flatnonzero(related >= min_relevance)
        if len(candidates) > k:  # keep every memory tied with the k-th so the order is stable
            cut = np.partition(scores[candidates], len(candidates) - k)[len(candidates) - k]
            candidates = candidates[scores[candidates] >= cut]
        order = candidates[np.argsort(-scores[candidates], kind="stable")][:k]
        return [
            ScoredMemory(
                memory=self._memories[i],
                score=float(scores[i]),
                relevance=float(related[i]),
                retention=float(kept[i]),
                cosine=float(cosine[i]),
                keyword_overlap=float(overlap[i]),
            )
            for i in order
        ]

    def _overlap(self, query_keywords: Collection[str]) -> FloatArray:
        distinct = frozenset(query_keywords)
        counts = np.zeros(len(self._memories))
        for word in distinct:
            positions = self._postings.get(word)
            if positions:
                counts[positions] += 1.0  # each memory appears once per word
        return counts / len(distinct) if distinct else counts

    def _merge_pending(self) -> None:
        """Fold memories appended since the last search into the arrays (one copy per search)."""
        if not self._pending:
            return
        vectors, importance, timestamps = zip(*self._pending, strict=True)
        head = [] if self._vectors is None else [self._vectors]
        self._vectors = np.concatenate([*head, *vectors])
        self._importance = np.concatenate([self._importance, *importance])
        self._timestamps = np.concatenate([self._timestamps, *timestamps])
        self._pending.clear()
