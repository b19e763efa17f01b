"""Tests for core.eval.metrics against hand-computed values."""

from __future__ import annotations

import pytest

from core.errors import InvalidArgument
from core.eval.metrics import evaluate_run, mrr_at_k, ndcg_at_k, recall_at_k

RANKED = ["d3", "d1", "d2", "d4"]
RELEVANT = {"d1": 2, "d2": 1, "d5": 1, "d3": 0}
LOG2_3 = 1.584962500721156


@pytest.mark.parametrize(
    ("k", "expected"), [(10, 0.5), (2, 0.5), (1, 0.0)], ids=["k10", "k2", "k1"]
)
def test_mrr(k: int, expected: float) -> None:
    assert mrr_at_k(RANKED, RELEVANT, k) == expected


def test_mrr_first_hit_and_none() -> None:
    assert mrr_at_k(["d1", "d2"], RELEVANT) == 1.0
    assert mrr_at_k(["x", "y", "d2"], RELEVANT) == pytest.approx(1 / 3)
    assert mrr_at_k([], RELEVANT) == 0.0
    assert mrr_at_k(["d3"], RELEVANT) == 0.0, "grade 0 is not relevant"


@pytest.mark.parametrize(
    ("k", "expected"),
    [(10, 2 / 3), (3, 2 / 3), (2, 1 / 3), (1, 0.0)],
    ids=["k10", "k3", "k2", "k1"],
)
def test_recall(k: int, expected: float) -> None:
    assert recall_at_k(RANKED, RELEVANT, k) == pytest.approx(expected)


def test_recall_nothing_relevant() -> None:
    assert recall_at_k(["a"], {"a": 0}) == 0.0
    assert recall_at_k(["a"], {}) == 0.0


def test_ndcg_hand_computed() -> None:
    # DCG@10 = 0/1 + 2/log2(3) + 1/log2(4) = 1.261860 + 0.5 = 1.761860
    # IDCG@10 = 2/1 + 1/log2(3) + 1/log2(4) = 2 + 0.630930 + 0.5 = 3.130930
    assert ndcg_at_k(RANKED, RELEVANT, 10) == pytest.approx(0.562727, abs=1e-6)
    # DCG@2 = 2/log2(3) = 1.261860; IDCG@2 = 2 + 1/log2(3) = 2.630930
    assert ndcg_at_k(RANKED, RELEVANT, 2) == pytest.approx(0.479625, abs=1e-6)
    assert ndcg_at_k(RANKED, RELEVANT, 1) == 0.0


def test_ndcg_perfect_and_empty() -> None:
    assert ndcg_at_k(["d1", "d2", "d5"], RELEVANT) == pytest.approx(1.0)
    assert ndcg_at_k(["d1", "d5", "d2"], RELEVANT) == pytest.approx(1.0), "equal grades tie"
    assert ndcg_at_k(["d1"], {"d1": 0}) == 0.0


def test_repeated_ids_count_once() -> None:
    ranked = ["d1", "d1", "d2"]
    assert recall_at_k(ranked, RELEVANT, 2) == pytest.approx(2 / 3)
    assert ndcg_at_k(ranked, {"d1": 1}, 10) == 1.0
    assert ndcg_at_k(ranked, {"d2": 1}, 10) == pytest.approx(1 / LOG2_3)


def test_evaluate_run() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d9": 1}}
    run = {"q1": ["d1", "x"], "q2": ["x", "d2"], "q4": ["d9"]}
    result = evaluate_run(run, qrels, k=10)
    assert list(result) == ["mrr@10", "recall@10", "ndcg@10"]
    assert result["mrr@10"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert result["recall@10"] == pytest.approx(2 / 3)
    assert result["ndcg@10"] == pytest.approx((1 + 1 / LOG2_3) / 3)
    assert evaluate_run(run, qrels, k=1) == pytest.approx(
        {"mrr@1": 1 / 3, "recall@1": 1 / 3, "ndcg@1": 1 / 3}
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mrr_at_k(["a"], {"a": 1}, 0), "k: must be an integer >= 1, got 0"),
        (lambda: recall_at_k(["a"], {}, -1), "k: must be an integer >= 1, got -1"),
        (lambda: ndcg_at_k(["a"], {"a": 1}, 0), "k: must be an integer >= 1, got 0"),
        (lambda: evaluate_run({}, {}), "qrels: no judged queries to evaluate; check the split"),
    ],
    ids=["mrr_k", "recall_k", "ndcg_k", "empty_qrels"],
)
def test_validation(call: object, message: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        call()  # type: ignore[operator]
    assert str(caught.value) == message
