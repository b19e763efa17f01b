"""Tests for core.context.ordering: score bands, section depth, source diversity, chunk-id ties."""

from __future__ import annotations

import itertools

from core.context.ordering import order_hits, score_tolerance, section_depth
from core.models import Chunk, Hit, SourceType


def hit(row_id: int, doc: str, score: float, section: tuple[str, ...] = ("S",)) -> Hit:
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
    return Hit(chunk=chunk, rank=row_id, score=score)


def ids(hits: tuple[Hit, ...]) -> list[int]:
    return [h.chunk.row_id for h in hits]


def test_score_order_when_scores_are_apart() -> None:
    hits = [hit(1, "a", 0.5), hit(2, "a", 0.9, ("S", "T", "U")), hit(3, "b", 0.7)]
    assert ids(order_hits(hits)) == [2, 3, 1]


def test_close_scores_prefer_shallow_sections() -> None:
    hits = [hit(1, "a", 1.0, ("S", "T")), hit(2, "b", 0.99, ("S",)), hit(3, "c", 0.97, ())]
    # 0.97 is outside 2 % of 1.0: it starts the next band despite its depth of 0.
    assert ids(order_hits(hits)) == [2, 1, 3]


def test_close_scores_prefer_a_new_source() -> None:
    hits = [hit(1, "a", 1.0), hit(2, "a", 0.995), hit(3, "b", 0.99), hit(4, "a", 0.5)]
    assert ids(order_hits(hits)) == [1, 3, 2, 4]


def test_diversity_counts_sources_of_earlier_bands() -> None:
    hits = [hit(1, "a", 10.0), hit(2, "a", 5.0), hit(3, "b", 4.95)]
    assert ids(order_hits(hits)) == [1, 3, 2]


def test_equal_keys_fall_back_to_chunk_id_and_input_order_does_not_matter() -> None:
    hits = [hit(3, "c", 0.5), hit(1, "a", 0.5), hit(2, "b", 0.5)]
    for permutation in itertools.permutations(hits):
        assert ids(order_hits(permutation)) == [1, 2, 3]


def test_nan_scores_go_last_and_input_is_untouched() -> None:
    hits = [hit(1, "a", float("nan")), hit(2, "b", 0.1), hit(3, "c", -5.0)]
    snapshot = list(hits)
    assert ids(order_hits(hits)) == [2, 3, 1]
    assert hits == snapshot or all(a is b for a, b in zip(hits, snapshot, strict=True))


def test_tolerance_and_depth() -> None:
    assert score_tolerance(10.0) == 0.2
    assert score_tolerance(-10.0) == 0.2
    assert score_tolerance(0.0) == 1e-9
    assert section_depth(hit(1, "a", 1.0, ("A", "", "B"))) == 2
