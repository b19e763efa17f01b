"""Tests for core.retrieve.rerank: apply_rerank and run_reranker."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from core.errors import InvalidArgument, UpstreamFailure
from core.models import Chunk, Hit, SourceType, StageScores
from core.retrieve.rerank import ReportingReranker, Reranker, apply_rerank, run_reranker


def hit(row_id: int, score: float) -> Hit:
    chunk = Chunk(
        row_id=row_id,
        chunk_id=f"d#{row_id}",
        document_id="d",
        ordinal=row_id,
        text=f"text {row_id}",
        section_path=(),
        has_code=False,
        token_estimate=2,
        source_type=SourceType.TEXT,
        source_path="d.txt",
    )
    return Hit(chunk=chunk, rank=row_id, score=score, scores=StageScores(fused=score, dense=0.1))


HITS = [hit(1, 0.9), hit(2, 0.8), hit(3, 0.7), hit(4, 0.6), hit(5, 0.5)]


def rows(hits: Sequence[Hit]) -> list[int]:
    return [h.chunk.row_id for h in hits]


def test_reorders_the_head_keeps_the_tail_and_renumbers() -> None:
    before = list(HITS)
    ranked = apply_rerank(HITS, [0.1, 3.0, -2.0], depth=3)
    assert HITS == before, "inputs must not be mutated"
    assert rows(ranked) == [2, 1, 3, 4, 5]
    assert [h.rank for h in ranked] == [1, 2, 3, 4, 5]
    assert [h.scores.rerank for h in ranked] == [3.0, 0.1, -2.0, None, None]
    assert ranked[0].score == 0.8, "the fused score is kept"
    assert ranked[0].scores == StageScores(fused=0.8, dense=0.1, rerank=3.0)


def test_equal_scores_keep_the_fused_order() -> None:
    ranked = apply_rerank(HITS, [1.0, 2.0, 1.0, 2.0, 1.0], depth=5)
    assert rows(ranked) == [2, 4, 1, 3, 5]


def test_depth_beyond_the_list_reranks_everything() -> None:
    ranked = apply_rerank(HITS[:2], [0.0, 1.0], depth=200)
    assert rows(ranked) == [2, 1]
    assert apply_rerank([], [], depth=10) == []


@pytest.mark.parametrize(
    ("scores", "depth", "error", "message"),
    [
        ([1.0], 0, InvalidArgument, "rerank.depth: must be >= 1, got 0"),
        (
            [1.0, 2.0],
            3,
            ValueError,
            "expected 3 rerank scores (one per hit within depth), got 2",
        ),
        ([1.0, float("nan")], 2, ValueError, "rerank score 1 is not finite: nan"),
    ],
    ids=["depth-zero", "wrong-count", "nan"],
)
def test_rejects_bad_input(
    scores: list[float], depth: int, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        apply_rerank(HITS, scores, depth)
    assert str(caught.value) == message


class WordOverlapReranker:
    """A real (if naive) Reranker: the share of query words found in each passage."""

    name = "word-overlap"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        words = set(query.lower().split())
        return [len(words & set(p.lower().split())) / len(words) for p in passages]


class BrokenReranker:
    """A reranker that returns what it was told to, to exercise run_reranker's checks."""

    name = "broken"

    def __init__(self, scores: list[float]) -> None:
        self._scores = scores

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return list(self._scores)


def test_run_reranker_scores_a_plain_reranker_without_warning() -> None:
    reranker: Reranker = WordOverlapReranker()
    assert not isinstance(reranker, ReportingReranker)
    outcome = run_reranker(reranker, "sort a list", ["a tuple", "sort the list", "list"])
    assert outcome.scores == pytest.approx((1 / 3, 2 / 3, 1 / 3))
    assert outcome.warning == ""


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([1.0], "reranker broken returned 1 scores for 2 passages"),
        (
            [1.0, float("inf")],
            "reranker broken returned a non-finite score (inf) for passage 1",
        ),
    ],
    ids=["wrong-count", "infinite"],
)
def test_run_reranker_refuses_bad_scores(scores: list[float], message: str) -> None:
    with pytest.raises(UpstreamFailure) as caught:
        run_reranker(BrokenReranker(scores), "q", ["a", "b"])
    assert str(caught.value) == message
