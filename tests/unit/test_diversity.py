"""Section-score mixing, per-document grouping and MMR on hand-made rankings (pure functions)."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import InvalidArgument
from core.models import Chunk, Hit, SourceType
from core.retrieve.diversity import (
    at_most_per_document,
    maximal_marginal_relevance,
    validate_mmr_lambda,
)
from core.retrieve.section_scores import with_section_scores


def hit(row_id: int, document_id: str, score: float, rank: int) -> Hit:
    chunk = Chunk(
        row_id=row_id,
        chunk_id=f"{document_id}#{row_id}",
        document_id=document_id,
        ordinal=row_id,
        text=f"chunk {row_id}",
        section_path=(),
        has_code=False,
        token_estimate=2,
        source_type=SourceType.TEXT,
        source_path="",
    )
    return Hit(chunk=chunk, rank=rank, score=score)


def ranked(*specs: tuple[int, str, float]) -> list[Hit]:
    return [hit(r, d, s, rank) for rank, (r, d, s) in enumerate(specs, start=1)]


def order(hits: list[Hit]) -> list[int]:
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    return [h.chunk.row_id for h in hits]


def unit(*rows: list[float]) -> np.ndarray:
    matrix = np.array(rows, dtype=np.float32)
    normalised: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return normalised


HITS = ranked((1, "a", 0.9), (2, "a", 0.85), (3, "a", 0.8), (4, "b", 0.7), (5, "c", 0.6))
# Chunks 1-3 are near-duplicates; 4 and 5 point elsewhere.
VECTORS = unit([1, 0, 0], [1, 0.05, 0], [1, 0, 0.05], [0, 1, 0], [0, 0, 1])


def test_at_most_one_per_document_puts_other_documents_first() -> None:
    assert order(at_most_per_document(HITS, 1)) == [1, 4, 5, 2, 3]
    assert order(at_most_per_document(HITS, 2)) == [1, 2, 4, 5, 3]


def test_no_per_document_limit_keeps_the_ranking() -> None:
    assert at_most_per_document(HITS, 0) == HITS


def test_mmr_with_lambda_1_is_the_plain_ranking() -> None:
    assert maximal_marginal_relevance(HITS, VECTORS, 1.0, k=5) == HITS


def test_mmr_pushes_near_duplicates_down() -> None:
    assert order(maximal_marginal_relevance(HITS, VECTORS, 0.5, k=3)) == [1, 4, 5, 2, 3]


def test_mmr_reorders_only_the_first_k_and_keeps_the_rest_in_order() -> None:
    assert order(maximal_marginal_relevance(HITS, VECTORS, 0.5, k=2)) == [1, 4, 2, 3, 5]


@pytest.mark.parametrize("value", [0.0, 0.3, 1.0])
def test_mmr_lambda_in_range_is_accepted(value: float) -> None:
    assert validate_mmr_lambda(value) == value


@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan")], ids=["negative", "above-1", "nan"])
def test_mmr_lambda_out_of_range_names_the_range(value: float) -> None:
    with pytest.raises(InvalidArgument) as caught:
        validate_mmr_lambda(value)
    assert str(caught.value) == (
        f"mmr_lambda: must be between 0 and 1 (1 = plain ranking, lower = more diverse); got {value:g}"
    )


def test_section_weight_0_keeps_chunk_scores() -> None:
    ranking = [(1, 0.9), (2, 0.5)]
    ids = np.array([1, 2], np.int64)
    assert with_section_scores(ranking, unit([1, 0])[0], ids, unit([0, 1], [1, 0]), 0.0) == ranking


def test_section_scores_mix_and_reorder() -> None:
    query = unit([1, 0])[0]
    ranking = [(1, 0.9), (2, 0.5), (3, 0.4)]
    ids = np.array([1, 2, 3], np.int64)
    sections = unit([0, 1], [1, 0], [1, 0])  # chunk 1's section misses, 2 and 3 share one that hits
    mixed = with_section_scores(ranking, query, ids, sections, 0.5)
    assert [row for row, _ in mixed] == [2, 3, 1]
    assert [round(score, 4) for _, score in mixed] == [0.75, 0.7, 0.45]


def test_chunks_without_a_section_vector_keep_their_score() -> None:
    query = unit([1, 0])[0]
    mixed = with_section_scores(
        [(1, 0.9), (2, 0.5)], query, np.array([2], np.int64), unit([1, 0]), 1.0
    )
    assert [(row, round(score, 4)) for row, score in mixed] == [(2, 1.0), (1, 0.9)]
