"""Link-graph expansion: add chunks linked to the hits (links, previous/next chunk). Pure.

How it works, for a policy that is enabled:

1. Exploration (expansion_search.py). From each hit (an *origin*), a breadth-first search runs
   over the edges its strategy follows (expansion_strategies.py) up to `policy.hops` levels.
   Paths only run through admitted chunks: a chunk that is missing or that `admits` rejects
   (filters, risk) is a dead end, so a filtered-out chunk can neither be returned nor steer
   what else is pulled in. Each chunk reached gets its shortest distance d from the origin and,
   among the paths of that length, the best product of edge factors.
2. Selection, hit by hit in rank order: each origin takes its best candidates (highest
   multiplier `score_discount**d x edge factors x document factor`; ties: shorter distance,
   then smaller row id) that are not already in the result, until it has `max_per_hit` or the
   result has `max_total` added chunks. A chunk reachable from several hits goes to the
   best-ranked one. SMART's document factor is recomputed after every pick. Because selection
   only looks back, origins are explored in rank-ordered groups (the first group just large
   enough to fill `max_total`, each next one twice as large) and the walk stops once
   `max_total` is reached: later hits are never explored.
3. Ordering: each expanded hit is placed right after its origin (and after that origin's
   earlier picks); ranks are renumbered 1..n. Adjacency is deliberate: a neighbour (the next
   chunk of a section, a linked definition) is read with the chunk it extends, so the context
   assembler, which takes hits in order until the budget is spent, keeps them together; merging
   by discounted score would push most expansions below every original hit and out of the
   budget, which defeats asking for them. Scores are therefore not monotone in rank after
   expansion; each expanded hit's `score` is `origin score x multiplier`, its
   `scores.expansion_discount` the multiplier, its `expanded_from` the origin's chunk id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from core.models import Chunk, Hit, StageScores, renumbered
from core.retrieve.expansion_policy import ExpansionPolicy
from core.retrieve.expansion_search import GraphWalker, LoadChunks, Neighbours, Reach
from core.retrieve.expansion_strategies import document_factor

__all__ = ["LoadChunks", "Neighbours", "expand"]


@dataclass(frozen=True, slots=True)
class _Pick:
    """A chunk selected for one origin, with the multiplier applied to the origin's score."""

    chunk: Chunk
    multiplier: float


@dataclass
class _Selection:
    """What has been picked so far (local to one expand call)."""

    taken: set[int]
    seen_documents: set[str]
    total: int = 0


def expand(
    hits: Sequence[Hit],
    neighbours: Neighbours,
    load_chunks: LoadChunks,
    admits: Callable[[Chunk], bool],
    policy: ExpansionPolicy,
) -> list[Hit]:
    """The hits with linked chunks inserted after their origins, ranks renumbered 1..n.

    A disabled policy returns the hits unchanged. Inputs are never mutated; the hits themselves
    are trusted as admitted and are never added twice. `neighbours` and `load_chunks` are
    called with sorted, distinct row ids, each row at most once per call of `expand`.
    """
    if not policy.enabled or not hits:
        return list(hits)
    walker = GraphWalker(hits, neighbours, load_chunks, admits, policy)
    state = _Selection({h.chunk.row_id for h in hits}, {h.chunk.document_id for h in hits})
    picks: list[list[_Pick]] = [[] for _ in hits]
    start, size = 0, -(-policy.max_total // policy.max_per_hit)
    while start < len(hits) and state.total < policy.max_total:
        group = range(start, min(start + size, len(hits)))
        reached = walker.explore([hits[i].chunk.row_id for i in group])
        for i, candidates in zip(group, reached, strict=True):
            picks[i] = _pick(candidates, state, policy)
        start, size = group.stop, 2 * size
    merged: list[Hit] = []
    for hit, chosen in zip(hits, picks, strict=True):
        merged.append(hit)
        merged.extend(_expanded_hit(hit, pick) for pick in chosen)
    return renumbered(merged)


def _expanded_hit(origin: Hit, pick: _Pick) -> Hit:
    return Hit(
        chunk=pick.chunk,
        rank=0,
        score=origin.score * pick.multiplier,
        scores=StageScores(expansion_discount=pick.multiplier),
        expanded_from=origin.chunk.chunk_id,
    )


def _pick(
    candidates: Mapping[int, Reach], state: _Selection, policy: ExpansionPolicy
) -> list[_Pick]:
    """One origin's best candidates within max_per_hit and max_total; updates `state`."""
    pool = {row: reach for row, reach in candidates.items() if row not in state.taken}
    chosen: list[_Pick] = []
    while pool and len(chosen) < policy.max_per_hit and state.total < policy.max_total:
        row, multiplier = _best(pool, state.seen_documents, policy)
        chunk = pool.pop(row).chunk
        chosen.append(_Pick(chunk, multiplier))
        state.taken.add(row)
        state.seen_documents.add(chunk.document_id)
        state.total += 1
    return chosen


def _best(
    pool: Mapping[int, Reach], seen_documents: set[str], policy: ExpansionPolicy
) -> tuple[int, float]:
    """The candidate with the highest multiplier (ties: shorter distance, smaller row id)."""
    best_row, best_key = -1, (-1.0, 0, 0)
    for row, reach in pool.items():
        multiplier = (
            policy.score_discount**reach.depth
            * reach.path_factor
            * document_factor(reach.chunk.document_id, seen_documents, policy)
        )
        key = (multiplier, -reach.depth, -row)
        if key > best_key:
            best_row, best_key = row, key
    return best_row, best_key[0]
