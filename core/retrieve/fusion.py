"""Fusion of ranked result lists (dense, lexical, memory...) into one ranking.

A ranking is a sequence of `(row_id, score)` pairs, best first. Every function here is pure:
inputs are never mutated and a new list is returned, best first, with a deterministic order for
equal scores (best single rank across the inputs first, then the smaller row id). When a row id
appears more than once in one ranking, only its first (best) occurrence counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from enum import Enum

from core.errors import InvalidArgument

Ranking = Sequence[tuple[int, float]]
Fused = list[tuple[int, float]]

DEFAULT_RRF_K = 60


class FusionMethod(str, Enum):  # noqa: UP042 - same base as the other domain enums
    """How several rankings are combined into one."""

    RRF = "rrf"
    WEIGHTED = "weighted"
    MAX = "max"
    DBSF = "dbsf"


def validate_rrf_k(k: int) -> None:
    """Raise InvalidArgument unless `k` is an integer >= 1."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidArgument.field(
            "hybrid.rrf_k", f"must be an integer >= 1, got {k!r}; leave it unset for 60"
        )


def validate_weights(weights: Sequence[float] | None, n_rankings: int) -> list[float]:
    """One finite weight >= 0 per ranking, not all zero; None means 1.0 each."""
    if weights is None:
        return [1.0] * n_rankings
    values = [float(w) for w in weights]
    if len(values) != n_rankings:
        raise InvalidArgument.field(
            "hybrid.weights",
            f"expected {n_rankings} weights (one per ranking), got {len(values)}",
        )
    for index, value in enumerate(values):
        if not math.isfinite(value) or value < 0:
            raise InvalidArgument.field(
                "hybrid.weights", f"weight {index} must be a finite number >= 0, got {value!r}"
            )
    if values and not any(values):
        raise InvalidArgument.field(
            "hybrid.weights", "at least one weight must be > 0; leave them unset for 1.0 each"
        )
    return values


def _dedupe(ranking: Ranking) -> list[tuple[int, float]]:
    """The ranking with later duplicates of a row id dropped."""
    seen: set[int] = set()
    kept: list[tuple[int, float]] = []
    for row_id, score in ranking:
        if row_id not in seen:
            seen.add(row_id)
            kept.append((row_id, float(score)))
    return kept


def _combine(
    rankings: Sequence[Ranking],
    weights: Sequence[float],
    contribution: Callable[[list[tuple[int, float]]], list[float]],
    reduce_max: bool = False,
) -> Fused:
    """Sum (or max) weighted per-list contributions and sort with deterministic ties."""
    totals: dict[int, float] = {}
    best_rank: dict[int, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        entries = _dedupe(ranking)
        for rank, ((row_id, _), value) in enumerate(
            zip(entries, contribution(entries), strict=True), start=1
        ):
            weighted = weight * value
            if row_id not in totals:
                totals[row_id] = weighted
            elif reduce_max:
                totals[row_id] = max(totals[row_id], weighted)
            else:
                totals[row_id] += weighted
            best_rank[row_id] = min(best_rank.get(row_id, rank), rank)
    order = sorted(totals, key=lambda row_id: (-totals[row_id], best_rank[row_id], row_id))
    return [(row_id, totals[row_id]) for row_id in order]


def _reciprocal(k: int) -> Callable[[list[tuple[int, float]]], list[float]]:
    return lambda entries: [1.0 / (k + rank) for rank in range(1, len(entries) + 1)]


def _min_max(entries: list[tuple[int, float]]) -> list[float]:
    """Scores scaled to [0, 1]; all-equal scores become 1.0."""
    if not entries:
        return []
    scores = [score for _, score in entries]
    low, high = min(scores), max(scores)
    if high == low:
        return [1.0] * len(scores)
    return [(score - low) / (high - low) for score in scores]


def _distribution(entries: list[tuple[int, float]]) -> list[float]:
    """(s - (mu - 3 sigma)) / (6 sigma) clipped to [0, 1]; population sigma; sigma 0 gives 1.0."""
    if not entries:
        return []
    scores = [score for _, score in entries]
    if max(scores) == min(scores):
        return [1.0] * len(scores)
    mean = math.fsum(scores) / len(scores)
    sigma = math.sqrt(math.fsum((score - mean) ** 2 for score in scores) / len(scores))
    if sigma == 0.0:
        return [1.0] * len(scores)
    low = mean - 3.0 * sigma
    return [min(1.0, max(0.0, (score - low) / (6.0 * sigma))) for score in scores]


def reciprocal_rank_fusion(
    rankings: Sequence[Ranking], k: int = DEFAULT_RRF_K, weights: Sequence[float] | None = None
) -> Fused:
    """Score = sum over rankings of weight / (k + rank), rank 1-based."""
    validate_rrf_k(k)
    return _combine(rankings, validate_weights(weights, len(rankings)), _reciprocal(k))


def weighted_score_fusion(
    rankings: Sequence[Ranking], weights: Sequence[float] | None = None
) -> Fused:
    """Score = weighted sum of min-max normalised scores; absent from a list counts 0."""
    return _combine(rankings, validate_weights(weights, len(rankings)), _min_max)


def max_score_fusion(rankings: Sequence[Ranking]) -> Fused:
    """Score = the highest min-max normalised score the row got in any list."""
    return _combine(rankings, [1.0] * len(rankings), _min_max, reduce_max=True)


def distribution_based_fusion(
    rankings: Sequence[Ranking], weights: Sequence[float] | None = None
) -> Fused:
    """DBSF: weighted sum of scores normalised by mean +/- 3 standard deviations."""
    return _combine(rankings, validate_weights(weights, len(rankings)), _distribution)


def parse_fusion_method(method: FusionMethod | str) -> FusionMethod:
    """The enum member for `method`; InvalidArgument naming the choices otherwise."""
    try:
        return FusionMethod(method)
    except ValueError:
        choices = ", ".join(member.value for member in FusionMethod)
        raise InvalidArgument.field(
            "hybrid.fusion", f"unknown fusion method {method!r}; use one of: {choices}"
        ) from None


def fuse(
    method: FusionMethod | str,
    rankings: Sequence[Ranking],
    k: int = DEFAULT_RRF_K,
    weights: Sequence[float] | None = None,
) -> Fused:
    """Dispatch to the fusion function for `method`.

    `k` and `weights` are validated whatever the method, so a bad request fails the same way
    in every mode; `k` is used by RRF only and `weights` are ignored by MAX.
    """
    chosen = parse_fusion_method(method)
    validate_rrf_k(k)
    validate_weights(weights, len(rankings))
    if chosen is FusionMethod.RRF:
        return reciprocal_rank_fusion(rankings, k=k, weights=weights)
    if chosen is FusionMethod.WEIGHTED:
        return weighted_score_fusion(rankings, weights=weights)
    if chosen is FusionMethod.MAX:
        return max_score_fusion(rankings)
    return distribution_based_fusion(rankings, weights=weights)
