"""Breadth-first search of the link graph around hits, for expansion (see expansion.py).

A `GraphWalker` lives for one `expand` call. It caches edges and chunks, so each row's edges
and each chunk are fetched at most once however many origins reach them, and it asks the store
once per level for all the origins it explores together. Paths only run through admitted
chunks; hits are trusted as admitted.

An origin stops early when going deeper cannot change what it gets: once it has at least
`max_total + max_per_hit` candidates whose smallest possible multiplier is at least the largest
multiplier any deeper chunk could get (`score_discount**(d+1)`; a tie goes to the nearer chunk),
no deeper chunk can be among its picks, whatever earlier origins take.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from core.models import Chunk, Edge, Hit
from core.retrieve.expansion_policy import ExpansionPolicy
from core.retrieve.expansion_strategies import edge_factor, min_document_factor

__all__ = ["GraphWalker", "LoadChunks", "Neighbours", "Reach"]

Neighbours = Callable[[Sequence[int]], Mapping[int, Sequence[Edge]]]
"""Outgoing edges of each given row id (rows without edges may be absent)."""

LoadChunks = Callable[[Sequence[int]], Mapping[int, Chunk]]
"""Chunks by row id; rows that no longer exist are absent."""


@dataclass(frozen=True, slots=True)
class Reach:
    """A chunk reached from one origin: its distance and best path factor at that distance."""

    chunk: Chunk
    depth: int
    path_factor: float


class GraphWalker:
    """Explores the graph from origins for one expansion, with caches shared across origins."""

    def __init__(
        self,
        hits: Sequence[Hit],
        neighbours: Neighbours,
        load_chunks: LoadChunks,
        admits: Callable[[Chunk], bool],
        policy: ExpansionPolicy,
    ) -> None:
        self._neighbours = neighbours
        self._load_chunks = load_chunks
        self._admits = admits
        self._policy = policy
        self._hit_rows = frozenset(hit.chunk.row_id for hit in hits)
        self._chunks: dict[int, Chunk | None] = {hit.chunk.row_id: hit.chunk for hit in hits}
        self._edges: dict[int, Sequence[Edge]] = {}
        self._enough = policy.max_total + policy.max_per_hit
        self._min_document_factor = min_document_factor(policy)

    def explore(self, origins: Sequence[int]) -> list[dict[int, Reach]]:
        """Per origin row: the admitted chunks within `hops`, with distance and path factor."""
        reached: list[dict[int, Reach]] = [{} for _ in origins]
        frontiers: list[dict[int, float]] = [{origin: 1.0} for origin in origins]
        for depth in range(1, self._policy.hops + 1):
            rows = sorted({row for frontier in frontiers for row in frontier})
            if not rows:
                break
            edges = self._edges_of(rows)
            levels = [
                self._next_level(frontier, edges, reached[i], origins[i])
                for i, frontier in enumerate(frontiers)
            ]
            self._load({row for level in levels for row in level})
            for i, level in enumerate(levels):
                frontier: dict[int, float] = {}
                for row, factor in level.items():
                    chunk = self._chunks[row]
                    if chunk is not None:
                        reached[i][row] = Reach(chunk, depth, factor)
                        frontier[row] = factor
                frontiers[i] = {} if self._settled(reached[i], depth) else frontier
        return reached

    def _edges_of(self, rows: Sequence[int]) -> Mapping[int, Sequence[Edge]]:
        """Edges of `rows` (sorted), fetching only rows not fetched before."""
        missing = [row for row in rows if row not in self._edges]
        if missing:
            found = self._neighbours(missing)
            for row in missing:
                self._edges[row] = tuple(found.get(row, ()))
        return self._edges

    def _next_level(
        self,
        frontier: Mapping[int, float],
        edges: Mapping[int, Sequence[Edge]],
        visited: Mapping[int, Reach],
        origin: int,
    ) -> dict[int, float]:
        """Rows one edge beyond `frontier` not reached before, with their best path factor."""
        level: dict[int, float] = {}
        for row, parent_factor in frontier.items():
            for edge in edges.get(row, ()):
                target = edge.target_row_id
                if target == origin or target in visited:
                    continue
                factor = edge_factor(edge, self._policy)
                if factor is not None and parent_factor * factor > level.get(target, 0.0):
                    level[target] = parent_factor * factor
        return level

    def _load(self, rows: set[int]) -> None:
        """Cache, for `rows`, the chunk if it exists and is admitted, else None."""
        missing = sorted(row for row in rows if row not in self._chunks)
        if not missing:
            return
        loaded = self._load_chunks(missing)
        for row in missing:
            chunk = loaded.get(row)
            self._chunks[row] = chunk if chunk is not None and self._admits(chunk) else None

    def _settled(self, reached: Mapping[int, Reach], depth: int) -> bool:
        """Whether no chunk deeper than `depth` can be among this origin's picks."""
        discount = self._policy.score_discount
        ceiling = discount ** (depth + 1)
        strong = 0
        for row, reach in reached.items():
            floor = discount**reach.depth * reach.path_factor * self._min_document_factor
            if row not in self._hit_rows and floor >= ceiling:
                strong += 1
                if strong >= self._enough:
                    return True
        return False
