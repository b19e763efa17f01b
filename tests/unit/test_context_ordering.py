"""Tests for core.context.ordering: rank order, score bands, section depth, source diversity, ties."""

from __future__ import annotations

import itertools
from dataclasses import replace

from core.context.ordering import order_hits, ranking_score, score_tolerance, section_depth
from core.models import Chunk, Hit, SourceType, StageScores


def hit(
    row_id: int, doc: str, score: float, section: tuple[str, ...] = ("S",), rank: int = 0
) -> Hit:
    chunk = Chunk(
        row_id=row_id,
        chunk_id=f"{doc}#{row_id}",
        document_id=doc,
        ordinal=row_id,
        text=f"text {row_id}",
        section_path=section,
        has_code=False,
        token_estimate=2,
        source_type=SourceType.TEXT,
        source_path=f"{doc}.txt",
    )
    return Hit(chunk=chunk, rank=rank, score=score)


def ranked(*hits: Hit) -> list[Hit]:
    """The hits ranked as retrieval ranks them without a rerank: by score (NaN last), then row."""
    order = sorted(hits, key=lambda h: (h.score != h.score, -h.score, h.chunk.row_id))
    return [replace(h, rank=r) for r, h in enumerate(order, start=1)]


def ids(hits: tuple[Hit, ...]) -> list[int]:
    return [h.chunk.row_id for h in hits]


def test_score_order_when_scores_are_apart() -> None:
    hits = ranked(hit(1, "a", 0.5), hit(2, "a", 0.9, ("S", "T", "U")), hit(3, "b", 0.7))
    assert ids(order_hits(hits)) == [2, 3, 1]


def test_close_scores_prefer_shallow_sections() -> None:
    hits = ranked(hit(1, "a", 1.0, ("S", "T")), hit(2, "b", 0.99, ("S",)), hit(3, "c", 0.97, ()))
    # 0.97 is outside 2 % of 1.0: it starts the next band despite its depth of 0.
    assert ids(order_hits(hits)) == [2, 1, 3]


def test_close_scores_prefer_a_new_source() -> None:
    hits = ranked(hit(1, "a", 1.0), hit(2, "a", 0.995), hit(3, "b", 0.99), hit(4, "a", 0.5))
    assert ids(order_hits(hits)) == [1, 3, 2, 4]


def test_diversity_counts_sources_of_earlier_bands() -> None:
    hits = ranked(hit(1, "a", 10.0), hit(2, "a", 5.0), hit(3, "b", 4.95))
    assert ids(order_hits(hits)) == [1, 3, 2]


def test_equal_keys_fall_back_to_chunk_id_and_input_order_does_not_matter() -> None:
    hits = ranked(hit(3, "c", 0.5), hit(1, "a", 0.5), hit(2, "b", 0.5))
    for permutation in itertools.permutations(hits):
        assert ids(order_hits(permutation)) == [1, 2, 3]


def test_nan_scores_go_last_and_input_is_untouched() -> None:
    hits = ranked(hit(1, "a", float("nan")), hit(2, "b", 0.1), hit(3, "c", -5.0))
    snapshot = list(hits)
    assert ids(order_hits(hits)) == [2, 3, 1]
    assert hits == snapshot or all(a is b for a, b in zip(hits, snapshot, strict=True))


def test_tolerance_and_depth() -> None:
    assert score_tolerance(10.0) == 0.2
    assert score_tolerance(-10.0) == 0.2
    assert score_tolerance(0.0) == 1e-9
    assert section_depth(hit(1, "a", 1.0, ("A", "", "B"))) == 2


def reranked(h: Hit, rank: int, rerank: float) -> Hit:
    return replace(h, rank=rank, scores=replace(h.scores, rerank=rerank))


def test_a_rerank_order_is_followed_not_the_fused_score() -> None:
    # Fused scores say 1 > 2 > 3; the reranker put 3 first and 1 last, and 4 was outside its window.
    hits = [
        reranked(hit(1, "a", 0.9), 3, 0.1),
        reranked(hit(2, "b", 0.8), 2, 0.5),
        reranked(hit(3, "c", 0.7), 1, 0.95),
        hit(4, "d", 0.95, rank=4),
    ]
    assert ids(order_hits(hits)) == [3, 2, 1, 4]
    assert ranking_score(hits[2]) == 0.95


def test_close_rerank_scores_band_but_never_with_unreranked_hits() -> None:
    hits = [
        reranked(hit(1, "a", 0.1, ("S", "T")), 1, 0.800),
        reranked(hit(2, "b", 0.2, ("S",)), 2, 0.795),
        hit(3, "c", 0.79, (), rank=3),
    ]
    # 1 and 2 tie on rerank score, so the shallower 2 goes first; 3 has a close fused score but
    # was not reranked, so it stays behind both although its section is the shallowest.
    assert ids(order_hits(hits)) == [2, 1, 3]


def test_an_expanded_hit_stays_right_after_its_origin() -> None:
    origin = hit(1, "a", 0.9, rank=1)
    linked = replace(
        hit(7, "z", 0.9 * 0.5, ("Z",), rank=2),
        scores=StageScores(expansion_discount=0.5),
        expanded_from=origin.chunk.chunk_id,
    )
    # 8's score is within 2 % of nothing before it; 9 follows with a score far above the linked
    # chunk's, which must not pull 9 into the linked chunk's band.
    hits = [origin, linked, hit(8, "b", 0.8, rank=3), hit(9, "c", 0.46, rank=4)]
    assert ids(order_hits(hits)) == [1, 7, 8, 9]
    swapped = [origin, linked, hit(9, "c", 0.455, rank=3)]
    # 9 ties with the linked chunk (0.455 vs 0.45); both are depth 1 and new sources, so the
    # higher score goes first.
    assert ids(order_hits(swapped)) == [1, 9, 7]
