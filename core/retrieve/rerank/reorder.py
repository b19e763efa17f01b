"""Apply rerank scores to a ranked hit list. Pure: new hits out, inputs untouched."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from core.errors import InvalidArgument
from core.models import Hit, renumbered

__all__ = ["apply_rerank"]


def apply_rerank(hits: Sequence[Hit], scores: Sequence[float], depth: int) -> list[Hit]:
    """The first `depth` hits reordered by `scores`, then the rest in their order; ranks 1..n.

    `scores[i]` belongs to `hits[i]`; exactly `min(depth, len(hits))` scores are expected.
    Higher scores come first; equal scores keep their input order (the sort is stable).
    Reranked hits get `scores.rerank`; `score` (the fused score) is left as it was, so after a
    rerank the list order, not `score`, is the ranking. Raises InvalidArgument (field
    `rerank.depth`) when depth < 1 and ValueError for a wrong number of scores or a score that
    is not finite.
    """
    if isinstance(depth, bool) or depth < 1:
        raise InvalidArgument.field("rerank.depth", f"must be >= 1, got {depth!r}")
    head_size = min(depth, len(hits))
    if len(scores) != head_size:
        raise ValueError(
            f"expected {head_size} rerank scores (one per hit within depth), got {len(scores)}"
        )
    values = [float(score) for score in scores]
    for index, value in enumerate(values):
        if not math.isfinite(value):
            raise ValueError(f"rerank score {index} is not finite: {value}")
    order = sorted(range(head_size), key=lambda i: -values[i])
    head = [replace(hits[i], scores=replace(hits[i].scores, rerank=values[i])) for i in order]
    return renumbered(head + list(hits[head_size:]))
