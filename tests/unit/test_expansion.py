"""Contract tests for core.retrieve.expansion: random graphs against a plain reference BFS.

The reference below is written independently of the implementation: one unbatched deque BFS per
origin, the strategy table of expansion_strategies.py spelled out by hand, and a per-origin
greedy pick. The implementation batches store calls per level and must agree with it exactly.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.models import Chunk, Edge, EdgeKind, Hit, SourceType, StageScores, chunk_id_for
from core.retrieve.expansion import expand
from core.retrieve.expansion_policy import ExpansionPolicy, ExpansionStrategy

S = ExpansionStrategy


def make_chunk(row_id: int, document: str) -> Chunk:
    return Chunk(
        row_id=row_id,
        chunk_id=chunk_id_for(document, row_id),
        document_id=document,
        ordinal=row_id,
        text=f"chunk {row_id} of {document}",
        section_path=(),
        has_code=False,
        token_estimate=5,
        source_type=SourceType.MARKDOWN,
        source_path=f"{document}.md",
    )


def make_hits(chunks: Sequence[Chunk], scores: Sequence[float]) -> list[Hit]:
    return [
        Hit(chunk=c, rank=r, score=s, scores=StageScores(fused=s))
        for r, (c, s) in enumerate(zip(chunks, scores, strict=True), start=1)
    ]


@dataclass
class Graph:
    """A store stand-in: edges and chunks in dicts; it records every call it gets."""

    edges: dict[int, list[Edge]]
    chunks: dict[int, Chunk]
    admitted: frozenset[int]
    shuffle_seed: int | None = None
    neighbour_calls: list[list[int]] = field(default_factory=list)
    load_calls: list[list[int]] = field(default_factory=list)

    def neighbours(self, rows: Sequence[int]) -> Mapping[int, Sequence[Edge]]:
        self.neighbour_calls.append(list(rows))
        found = {row: list(self.edges[row]) for row in rows if row in self.edges}
        if self.shuffle_seed is not None:
            rng = random.Random(self.shuffle_seed)
            for edges in found.values():
                rng.shuffle(edges)
        return found

    def load_chunks(self, rows: Sequence[int]) -> Mapping[int, Chunk]:
        self.load_calls.append(list(rows))
        return {row: self.chunks[row] for row in rows if row in self.chunks}

    def admits(self, chunk: Chunk) -> bool:
        return chunk.row_id in self.admitted

    def run(self, hits: Sequence[Hit], policy: ExpansionPolicy) -> list[Hit]:
        return expand(hits, self.neighbours, self.load_chunks, self.admits, policy)


# --- the reference ------------------------------------------------------------------------


def reference_edge_factor(edge: Edge, policy: ExpansionPolicy) -> float | None:
    """The strategy table, spelled out."""
    preferred = policy.preferred_edge_types
    typed = 1.0 if not preferred or edge.kind in preferred else 0.5
    if policy.strategy is S.BASIC:
        return 1.0
    if policy.strategy is S.TYPE_AWARE:
        return typed
    if edge.weight <= 0:
        return None
    if policy.strategy is S.WEIGHTED:
        return edge.weight if edge.weight >= policy.min_edge_weight else None
    return edge.weight * typed


def reference_reach(
    graph: Graph, origin: int, passable: set[int], policy: ExpansionPolicy
) -> dict[int, tuple[int, float]]:
    """row -> (shortest distance, best edge-factor product over shortest paths), 1..hops."""
    depth = {origin: 0}
    best = {origin: 1.0}
    queue = deque([origin])
    while queue:
        row = queue.popleft()
        if depth[row] == policy.hops:
            continue
        for edge in graph.edges.get(row, []):
            factor = reference_edge_factor(edge, policy)
            target = edge.target_row_id
            if factor is None or target not in passable:
                continue
            if target not in depth:
                depth[target] = depth[row] + 1
                best[target] = best[row] * factor
                queue.append(target)
            elif depth[target] == depth[row] + 1:
                best[target] = max(best[target], best[row] * factor)
    return {row: (d, best[row]) for row, d in depth.items() if d > 0}


def reference_expand(
    graph: Graph, hits: Sequence[Hit], policy: ExpansionPolicy
) -> list[tuple[int, str, float]]:
    """(row id, expanded_from, multiplier) per output position."""
    if not policy.enabled:
        return [(h.chunk.row_id, "", 1.0) for h in hits]
    hit_rows = {h.chunk.row_id for h in hits}
    passable = hit_rows | {r for r in graph.chunks if r in graph.admitted}
    taken = set(hit_rows)
    documents = {h.chunk.document_id for h in hits}
    out: list[tuple[int, str, float]] = []
    added = 0
    for hit in hits:
        out.append((hit.chunk.row_id, "", 1.0))
        reach = reference_reach(graph, hit.chunk.row_id, passable, policy)
        mine = 0
        while mine < policy.max_per_hit and added < policy.max_total:
            options = []
            for row, (d, factor) in reach.items():
                if row in taken:
                    continue
                doc = graph.chunks[row].document_id
                diverse = 0.5 if policy.strategy is S.SMART and doc in documents else 1.0
                options.append((policy.score_discount**d * factor * diverse, -d, -row))
            if not options:
                break
            multiplier, _, negative_row = max(options)
            row = -negative_row
            out.append((row, hit.chunk.chunk_id, multiplier))
            taken.add(row)
            documents.add(graph.chunks[row].document_id)
            mine += 1
            added += 1
    return out


# --- random cases ---------------------------------------------------------------------------

KINDS = list(EdgeKind)


@st.composite
def cases(draw: st.DrawFn) -> tuple[Graph, list[Hit], ExpansionPolicy]:
    size = draw(st.integers(2, 24))
    documents = [f"d{i}" for i in range(draw(st.integers(1, 5)))]
    chunks = {row: make_chunk(row, draw(st.sampled_from(documents))) for row in range(size)}
    # Targets may name rows that do not exist (deleted chunks) and self-loops are allowed.
    edge_list = draw(
        st.lists(
            st.tuples(
                st.integers(0, size - 1),
                st.integers(0, size + 2),
                st.sampled_from(KINDS),
                st.sampled_from([0.1, 0.3, 0.5, 0.7, 1.0]),
            ),
            max_size=4 * size,
        )
    )
    edges: dict[int, list[Edge]] = {}
    for source, target, kind, weight in edge_list:
        edges.setdefault(source, []).append(Edge(source, target, kind, weight))
    admitted = frozenset(draw(st.sets(st.integers(0, size - 1))))
    hit_rows = draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=6, unique=True))
    raw_scores = draw(
        st.lists(st.floats(-1.0, 2.0), min_size=len(hit_rows), max_size=len(hit_rows))
    )
    hits = make_hits([chunks[r] for r in hit_rows], sorted(raw_scores, reverse=True))
    policy = ExpansionPolicy(
        enabled=True,
        strategy=draw(st.sampled_from(list(S))),
        max_per_hit=draw(st.integers(1, 4)),
        max_total=draw(st.integers(1, 12)),
        hops=draw(st.integers(1, 3)),
        score_discount=draw(st.sampled_from([0.25, 0.5, 0.9, 1.0])),
        min_edge_weight=draw(st.sampled_from([0.0, 0.4, 0.6])),
        preferred_edge_types=tuple(draw(st.sets(st.sampled_from(KINDS)))),
    )
    graph = Graph(edges, chunks, admitted, shuffle_seed=draw(st.none() | st.integers(0, 99)))
    return graph, hits, policy


@settings(max_examples=150, deadline=None)
@given(cases())
def test_agrees_with_reference_bfs(case: tuple[Graph, list[Hit], ExpansionPolicy]) -> None:
    graph, hits, policy = case
    out = graph.run(hits, policy)
    expected = reference_expand(graph, hits, policy)
    assert [(h.chunk.row_id, h.expanded_from) for h in out] == [(r, f) for r, f, _ in expected]
    for hit, (_, _, multiplier) in zip(out, expected, strict=True):
        if hit.expanded_from:
            assert hit.scores.expansion_discount == pytest.approx(multiplier, rel=1e-12)


@settings(max_examples=150, deadline=None)
@given(cases())
def test_contract_invariants(case: tuple[Graph, list[Hit], ExpansionPolicy]) -> None:
    graph, hits, policy = case
    before = list(hits)
    out = graph.run(hits, policy)
    assert hits == before, "inputs must not be mutated"
    assert [h.rank for h in out] == list(range(1, len(out) + 1))
    rows = [h.chunk.row_id for h in out]
    assert len(rows) == len(set(rows)), "no chunk twice"
    originals = [h for h in out if not h.expanded_from]
    assert [(h.chunk, h.score, h.scores) for h in originals] == [
        (h.chunk, h.score, h.scores) for h in hits
    ]
    added = [h for h in out if h.expanded_from]
    assert len(added) <= policy.max_total
    by_origin = {h.chunk.chunk_id: h for h in hits}
    hit_rows = {h.chunk.row_id for h in hits}
    passable = hit_rows | {r for r in graph.chunks if r in graph.admitted}
    current = None
    for hit in out:
        if not hit.expanded_from:
            current = hit
            continue
        assert current is not None and hit.expanded_from == current.chunk.chunk_id, "after origin"
        assert hit.chunk.row_id in graph.chunks and graph.admits(hit.chunk), "admits respected"
        origin = by_origin[hit.expanded_from]
        reach = reference_reach(graph, origin.chunk.row_id, passable, policy)
        assert hit.chunk.row_id in reach, "within hops over followed edges"
        depth, _ = reach[hit.chunk.row_id]
        discount = hit.scores.expansion_discount
        assert discount is not None and 0 < discount <= policy.score_discount**depth
        assert hit.score == origin.score * discount
        assert hit.scores == StageScores(expansion_discount=discount)
    for origin in hits:
        mine = [h for h in added if h.expanded_from == origin.chunk.chunk_id]
        assert len(mine) <= policy.max_per_hit
        if len(mine) < policy.max_per_hit and len(added) < policy.max_total:
            reach = reference_reach(graph, origin.chunk.row_id, passable, policy)
            assert set(reach) <= set(rows), "an origin below its caps takes every neighbour"
    assert graph.run(hits, policy) == out, "deterministic"


@settings(max_examples=60, deadline=None)
@given(cases())
def test_store_calls_are_sorted_and_never_repeat_a_row(
    case: tuple[Graph, list[Hit], ExpansionPolicy],
) -> None:
    graph, hits, policy = case
    graph.run(hits, policy)
    for calls in (graph.neighbour_calls, graph.load_calls):
        assert all(call == sorted(set(call)) for call in calls)
        requested = [row for call in calls for row in call]
        assert len(requested) == len(set(requested)), "each row fetched at most once"
    loaded = {row for call in graph.load_calls for row in call}
    assert not loaded & {h.chunk.row_id for h in hits}, "hits are never reloaded"


# --- hand-built graphs: one behaviour per strategy ------------------------------------------


def chain_graph() -> Graph:
    """0 -> 1 (next, 1.0) -> 2 (next, 1.0); 0 -> 3 (link, 0.3); 0 -> 4 (link, 0.8)."""
    chunks = {r: make_chunk(r, "a" if r < 3 else "b") for r in range(5)}
    edges = {
        0: [
            Edge(0, 1, EdgeKind.NEXT, 1.0),
            Edge(0, 3, EdgeKind.LINK, 0.3),
            Edge(0, 4, EdgeKind.LINK, 0.8),
        ],
        1: [Edge(1, 2, EdgeKind.NEXT, 1.0), Edge(1, 0, EdgeKind.PREV, 1.0)],
    }
    return Graph(edges, chunks, frozenset(chunks))


def expanded(out: Sequence[Hit]) -> list[tuple[int, float | None]]:
    return [(h.chunk.row_id, h.scores.expansion_discount) for h in out if h.expanded_from]


def policy(strategy: ExpansionStrategy, **changes: object) -> ExpansionPolicy:
    return ExpansionPolicy(enabled=True, strategy=strategy, **changes)  # type: ignore[arg-type]


def test_disabled_policy_returns_the_hits_and_touches_nothing() -> None:
    graph = chain_graph()
    hits = make_hits([graph.chunks[0]], [1.0])
    assert graph.run(hits, ExpansionPolicy()) == hits
    assert graph.neighbour_calls == [] and graph.load_calls == []


def test_basic_follows_every_edge_nearest_first_then_by_row_id() -> None:
    graph = chain_graph()
    hits = make_hits([graph.chunks[0]], [0.8])
    out = graph.run(hits, policy(S.BASIC, max_per_hit=4, hops=2))
    assert expanded(out) == [(1, 0.5), (3, 0.5), (4, 0.5), (2, 0.25)]
    assert [h.score for h in out] == [0.8, 0.4, 0.4, 0.4, 0.2]
    assert {h.expanded_from for h in out[1:]} == {"a#0"}


def test_weighted_drops_light_edges_and_multiplies_by_weight() -> None:
    graph = chain_graph()
    hits = make_hits([graph.chunks[0]], [1.0])
    out = graph.run(hits, policy(S.WEIGHTED, max_per_hit=4, min_edge_weight=0.5))
    assert expanded(out) == [(1, 0.5), (4, 0.4)]  # 3 (weight 0.3) is not followed


def test_type_aware_prefers_the_preferred_kind_and_still_allows_others() -> None:
    graph = chain_graph()
    hits = make_hits([graph.chunks[0]], [1.0])
    links = (EdgeKind.LINK,)
    out = graph.run(hits, policy(S.TYPE_AWARE, max_per_hit=1, preferred_edge_types=links))
    assert expanded(out) == [(3, 0.5)]  # BASIC would take row 1 (smaller id)
    out = graph.run(hits, policy(S.TYPE_AWARE, max_per_hit=3, preferred_edge_types=links))
    assert expanded(out) == [(3, 0.5), (4, 0.5), (1, 0.25)]


def test_smart_prefers_documents_not_yet_in_the_result() -> None:
    chunks = {0: make_chunk(0, "a"), 1: make_chunk(1, "a"), 2: make_chunk(2, "b")}
    edges = {0: [Edge(0, 1, EdgeKind.NEXT, 1.0), Edge(0, 2, EdgeKind.NEXT, 0.9)]}
    graph = Graph(edges, chunks, frozenset(chunks))
    hits = make_hits([chunks[0]], [1.0])
    assert expanded(graph.run(hits, policy(S.BASIC, max_per_hit=1))) == [(1, 0.5)]
    assert expanded(graph.run(hits, policy(S.WEIGHTED, max_per_hit=1))) == [(1, 0.5)]
    out = graph.run(hits, policy(S.SMART, max_per_hit=2))
    assert expanded(out) == [(2, 0.45), (1, 0.25)]  # same document: x 0.5


def test_smart_recomputes_diversity_after_each_pick() -> None:
    chunks = {0: make_chunk(0, "a"), 1: make_chunk(1, "b"), 2: make_chunk(2, "b")}
    chunks[3] = make_chunk(3, "c")
    edges = {0: [Edge(0, r, EdgeKind.LINK, w) for r, w in ((1, 1.0), (2, 0.95), (3, 0.6))]}
    graph = Graph(edges, chunks, frozenset(chunks))
    out = graph.run(make_hits([chunks[0]], [1.0]), policy(S.SMART, max_per_hit=3))
    # after row 1 (doc b), row 2 (doc b) drops to 0.95 x 0.5 below row 3 (doc c, 0.6)
    assert [r for r, _ in expanded(out)] == [1, 3, 2]


def test_a_rejected_chunk_is_a_dead_end() -> None:
    graph = chain_graph()
    graph.admitted = frozenset({0, 2, 3, 4})  # row 1 is filtered out
    out = graph.run(make_hits([graph.chunks[0]], [1.0]), policy(S.BASIC, max_per_hit=5, hops=3))
    assert [r for r, _ in expanded(out)] == [3, 4]  # row 2 is only reachable through row 1


def test_expansions_follow_their_origin_and_a_shared_neighbour_goes_to_the_better_hit() -> None:
    chunks = {r: make_chunk(r, f"d{r}") for r in range(5)}
    edges = {
        0: [Edge(0, 2, EdgeKind.LINK, 1.0)],
        1: [Edge(1, 2, EdgeKind.LINK, 1.0), Edge(1, 3, EdgeKind.LINK, 1.0)],
        4: [Edge(4, 1, EdgeKind.LINK, 1.0)],
    }
    graph = Graph(edges, chunks, frozenset(chunks))
    hits = make_hits([chunks[0], chunks[1], chunks[4]], [0.9, 0.8, 0.7])
    out = graph.run(hits, policy(S.BASIC))
    assert [(h.rank, h.chunk.row_id, h.expanded_from) for h in out] == [
        (1, 0, ""),
        (2, 2, "d0#0"),
        (3, 1, ""),
        (4, 3, "d1#1"),
        (5, 4, ""),  # its neighbour, row 1, is a hit already
    ]


def test_max_total_stops_expansion_across_hits() -> None:
    chunks = {r: make_chunk(r, "d") for r in range(6)}
    edges = {0: [Edge(0, 2, EdgeKind.NEXT, 1.0)], 1: [Edge(1, 3, EdgeKind.NEXT, 1.0)]}
    graph = Graph(edges, chunks, frozenset(chunks))
    hits = make_hits([chunks[0], chunks[1]], [1.0, 0.5])
    out = graph.run(hits, policy(S.BASIC, max_total=1))
    assert [(h.chunk.row_id, h.expanded_from) for h in out] == [(0, ""), (2, "d#0"), (1, "")]


def star(size: int) -> Graph:
    """Rows 0..size-1, each linked to ten rows of its own (100 + 10 * row + k), two levels deep."""
    chunks: dict[int, Chunk] = {}
    edges: dict[int, list[Edge]] = {}
    for row in range(size):
        chunks[row] = make_chunk(row, f"d{row}")
        children = [100 + 10 * row + k for k in range(10)]
        edges[row] = [Edge(row, child, EdgeKind.LINK, 1.0) for child in children]
        for child in children:
            chunks[child] = make_chunk(child, f"d{row}")
            edges[child] = [Edge(child, 1000 + child, EdgeKind.NEXT, 1.0)]
            chunks[1000 + child] = make_chunk(1000 + child, f"d{row}")
    return Graph(edges, chunks, frozenset(chunks))


def test_hits_after_max_total_is_reached_are_never_explored() -> None:
    graph = star(6)
    hits = make_hits([graph.chunks[r] for r in range(6)], [0.6, 0.5, 0.4, 0.3, 0.2, 0.1])
    out = graph.run(hits, policy(S.BASIC, max_per_hit=2, max_total=4))
    assert [(h.chunk.row_id, h.expanded_from) for h in out][:6] == [
        (0, ""), (100, "d0#0"), (101, "d0#0"), (1, ""), (110, "d1#1"), (111, "d1#1"),
    ]  # fmt: skip
    assert graph.neighbour_calls == [[0, 1]], "hits 3-6 were not needed"


def test_an_origin_stops_going_deeper_once_nearer_chunks_must_win() -> None:
    graph = star(1)
    hits = make_hits([graph.chunks[0]], [1.0])
    # ten children at 0.5 >= every grandchild's 0.25, and 10 >= max_total + max_per_hit = 4
    out = graph.run(hits, policy(S.BASIC, max_per_hit=2, max_total=2, hops=3))
    assert [r for r, _ in expanded(out)] == [100, 101]
    assert graph.neighbour_calls == [[0]]
    # with no discount a grandchild could tie, but the nearer chunk wins ties: still settled
    graph = star(1)
    out = graph.run(hits, policy(S.BASIC, max_per_hit=2, max_total=2, hops=3, score_discount=1.0))
    assert [r for r, _ in expanded(out)] == [100, 101]
    assert graph.neighbour_calls == [[0]]
    # WEIGHTED children at weight 0.4 score 0.2, below the 0.25 a grandchild could reach: go deeper
    graph = star(1)
    graph.edges[0] = [Edge(0, c, EdgeKind.LINK, 0.4) for c in range(100, 110)]
    out = graph.run(hits, policy(S.WEIGHTED, max_per_hit=2, max_total=2, hops=2, min_edge_weight=0))
    assert len(graph.neighbour_calls) == 2


def test_a_preferred_path_two_hops_away_beats_a_non_preferred_neighbour() -> None:
    chunks = {r: make_chunk(r, "d") for r in (0, 1, 2, 10, 11, 12, 13)}
    edges = {
        0: [Edge(0, 1, EdgeKind.NEXT, 1.0)]
        + [Edge(0, r, EdgeKind.LINK, 1.0) for r in (10, 11, 12, 13)],
        1: [Edge(1, 2, EdgeKind.NEXT, 1.0)],
    }
    graph = Graph(edges, chunks, frozenset(chunks))
    out = graph.run(
        make_hits([chunks[0]], [1.0]),
        policy(
            S.TYPE_AWARE,
            max_per_hit=2,
            max_total=2,
            hops=2,
            score_discount=0.9,
            preferred_edge_types=(EdgeKind.NEXT,),
        ),
    )
    assert expanded(out) == [(1, 0.9), (2, pytest.approx(0.81))]  # links score 0.9 x 0.5
