"""Contract and reference tests for core.retrieve.fusion."""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable, Sequence

import pytest

from core.errors import InvalidArgument
from core.retrieve.fusion import (
    FusionMethod,
    distribution_based_fusion,
    fuse,
    max_score_fusion,
    reciprocal_rank_fusion,
    weighted_score_fusion,
)

Ranking = list[tuple[int, float]]
FuseFn = Callable[[Sequence[Ranking]], list[tuple[int, float]]]

METHODS: dict[str, FuseFn] = {
    "rrf": lambda rankings: reciprocal_rank_fusion(rankings),
    "rrf_k1_weighted": lambda rankings: reciprocal_rank_fusion(
        rankings, k=1, weights=[0.5 + i for i in range(len(rankings))]
    ),
    "weighted": lambda rankings: weighted_score_fusion(rankings),
    "max": max_score_fusion,
    "dbsf": lambda rankings: distribution_based_fusion(rankings),
    "fuse_dbsf_str": lambda rankings: fuse("dbsf", rankings),
}


def random_rankings(seed: int) -> list[Ranking]:
    """2-3 rankings over overlapping ids, scores non-increasing, with deliberate ties."""
    rng = random.Random(seed)
    rankings: list[Ranking] = []
    for _ in range(rng.randint(2, 3)):
        ids = rng.sample(range(40), rng.randint(0, 15))
        scores = sorted((round(rng.uniform(-2, 5), 1) for _ in ids), reverse=True)
        rankings.append(list(zip(ids, scores, strict=True)))
    return rankings


@pytest.fixture(params=sorted(METHODS), ids=sorted(METHODS))
def method(request: pytest.FixtureRequest) -> FuseFn:
    return METHODS[request.param]


@pytest.mark.parametrize("seed", range(40))
def test_contract_on_random_rankings(method: FuseFn, seed: int) -> None:
    rankings = random_rankings(seed)
    before = copy.deepcopy(rankings)
    fused = method(rankings)
    assert rankings == before, "inputs must not be mutated"
    scores = [score for _, score in fused]
    assert all(a >= b for a, b in zip(scores, scores[1:], strict=False))
    ids = [row_id for row_id, _ in fused]
    assert len(ids) == len(set(ids))
    assert set(ids) == {row_id for ranking in rankings for row_id, _ in ranking}
    assert all(math.isfinite(score) for score in scores)
    assert method(copy.deepcopy(rankings)) == fused, "must be deterministic"


def test_contract_on_empty_input(method: FuseFn) -> None:
    assert method([[], []]) == []


def test_contract_on_tuple_input(method: FuseFn) -> None:
    rankings = (((3, 1.0), (1, 0.5)), ((1, 2.0),))
    assert {row_id for row_id, _ in method(rankings)} == {1, 3}  # type: ignore[arg-type]


def test_rrf_hand_computed_with_ties() -> None:
    dense = [(1, 0.9), (2, 0.8), (3, 0.7)]
    lexical = [(3, 5.0), (4, 4.0), (1, 3.0)]
    # 1 and 3 both score 1/61 + 1/63 with best rank 1; 2 and 4 both 1/62 with best rank 2.
    assert reciprocal_rank_fusion([dense, lexical]) == [
        (1, 1 / 61 + 1 / 63),
        (3, 1 / 63 + 1 / 61),
        (2, 1 / 62),
        (4, 1 / 62),
    ]


def test_rrf_hand_computed_weighted() -> None:
    first = [(10, 0.0), (20, 0.0)]
    second = [(20, 0.0), (30, 0.0)]
    fused = reciprocal_rank_fusion([first, second], k=1, weights=[2.0, 1.0])
    assert [row_id for row_id, _ in fused] == [20, 10, 30]
    assert [score for _, score in fused] == pytest.approx([2 / 3 + 1 / 2, 1.0, 1 / 3])


def test_rrf_tie_prefers_best_single_rank_then_row_id() -> None:
    # 7: ranks 2 and 2 -> 2/62; 5: ranks 1 and 3 -> 1/61 + 1/63 (larger); 9 and 8: rank 3 alone.
    fused = reciprocal_rank_fusion([[(5, 1), (7, 1), (9, 1)], [(8, 1), (7, 1), (5, 1)]])
    assert [row_id for row_id, _ in fused][:2] == [5, 7]
    assert [row_id for row_id, _ in fused][2:] == [8, 9]


def test_weighted_hand_computed() -> None:
    first = [(1, 10.0), (2, 5.0), (3, 0.0)]
    second = [(3, 2.0), (1, 1.0)]
    assert weighted_score_fusion([first, second]) == [(1, 1.0), (3, 1.0), (2, 0.5)]
    assert weighted_score_fusion([first, second], weights=[0.5, 2.0]) == [
        (3, 2.0),
        (1, 0.5),
        (2, 0.25),
    ]


def test_weighted_zero_weight_keeps_single_list_order() -> None:
    first = [(4, 9.0), (2, 7.5), (8, 3.0), (6, 1.0)]
    second = [(6, 10.0), (1, 8.0), (2, 1.0)]
    fused = weighted_score_fusion([first, second], weights=[1.0, 0.0])
    order = [row_id for row_id, _ in fused]
    assert [row_id for row_id in order if row_id in dict(first)] == [4, 2, 8, 6]
    assert order[:3] == [4, 2, 8]
    assert dict(fused)[1] == 0.0


def test_all_equal_scores_normalise_to_one() -> None:
    flat = [(3, 0.2), (1, 0.2), (2, 0.2)]
    for fused in (weighted_score_fusion([flat]), max_score_fusion([flat])):
        assert fused == [(3, 1.0), (1, 1.0), (2, 1.0)]
    assert distribution_based_fusion([flat]) == [(3, 1.0), (1, 1.0), (2, 1.0)]


def test_max_hand_computed() -> None:
    first = [(1, 10.0), (2, 0.0)]
    second = [(2, 4.0), (3, 2.0), (1, 0.0)]
    assert max_score_fusion([first, second]) == [(1, 1.0), (2, 1.0), (3, 0.5)]


def test_dbsf_hand_computed() -> None:
    # mean 2, population sigma 1: (s - (2 - 3)) / 6.
    assert distribution_based_fusion([[(7, 3.0), (8, 1.0)]]) == [(7, 4 / 6), (8, 2 / 6)]
    fused = distribution_based_fusion([[(7, 3.0), (8, 1.0)], [(8, 5.0)]], weights=[1.0, 0.5])
    assert fused == [(8, 2 / 6 + 0.5), (7, 4 / 6)]


def test_dbsf_clips_outliers() -> None:
    scores = [(i, 0.0) for i in range(1, 20)]
    fused = dict(distribution_based_fusion([[(0, 100.0), *scores]]))
    assert fused[0] == 1.0
    assert all(0.0 <= value <= 1.0 for value in fused.values())


def test_duplicate_row_in_one_ranking_counts_once() -> None:
    assert reciprocal_rank_fusion([[(1, 3.0), (2, 2.0), (1, 1.0)]]) == [(1, 1 / 61), (2, 1 / 62)]


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        (FusionMethod.RRF, reciprocal_rank_fusion),
        (FusionMethod.WEIGHTED, weighted_score_fusion),
        (FusionMethod.DBSF, distribution_based_fusion),
    ],
    ids=["rrf", "weighted", "dbsf"],
)
def test_fuse_dispatches(method: FusionMethod, expected: Callable[..., object]) -> None:
    rankings = random_rankings(7)
    assert fuse(method, rankings, 60, [1.0] * len(rankings)) == expected(
        rankings, weights=[1.0] * len(rankings)
    )
    assert fuse(method.value, rankings) == expected(rankings)


def test_fuse_max_ignores_weights() -> None:
    rankings = random_rankings(3)
    assert fuse(FusionMethod.MAX, rankings, weights=[5.0] * len(rankings)) == max_score_fusion(
        rankings
    )


def _fail(call: Callable[[], object]) -> InvalidArgument:
    with pytest.raises(InvalidArgument) as caught:
        call()
    return caught.value


TWO = [[(1, 1.0)], [(2, 1.0)]]


@pytest.mark.parametrize(
    ("call", "field", "message"),
    [
        (
            lambda: reciprocal_rank_fusion(TWO, k=0),
            "hybrid.rrf_k",
            "must be an integer >= 1, got 0; leave it unset for 60",
        ),
        (
            lambda: fuse("weighted", TWO, k=-5),
            "hybrid.rrf_k",
            "must be an integer >= 1, got -5; leave it unset for 60",
        ),
        (
            lambda: reciprocal_rank_fusion(TWO, weights=[1.0]),
            "hybrid.weights",
            "expected 2 weights (one per ranking), got 1",
        ),
        (
            lambda: weighted_score_fusion(TWO, weights=[1.0, -0.5]),
            "hybrid.weights",
            "weight 1 must be a finite number >= 0, got -0.5",
        ),
        (
            lambda: distribution_based_fusion(TWO, weights=[math.nan, 1.0]),
            "hybrid.weights",
            "weight 0 must be a finite number >= 0, got nan",
        ),
        (
            lambda: fuse(FusionMethod.RRF, TWO, weights=[0.0, 0.0]),
            "hybrid.weights",
            "at least one weight must be > 0; leave them unset for 1.0 each",
        ),
        (
            lambda: fuse("borda", TWO),
            "hybrid.fusion",
            "unknown fusion method 'borda'; use one of: rrf, weighted, max, dbsf",
        ),
    ],
    ids=[
        "rrf_k_zero",
        "rrf_k_negative_any_method",
        "weights_length",
        "weight_negative",
        "weight_nan",
        "weights_all_zero",
        "unknown_method",
    ],
)
def test_validation_messages(call: Callable[[], object], field: str, message: str) -> None:
    error = _fail(call)
    assert str(error) == f"{field}: {message}"
    assert [(v.field, v.description) for v in error.violations] == [(field, message)]
