"""What each expansion strategy follows and how it scores a neighbour. Pure functions.

An expanded chunk reached from a hit over a path of edges e1..ed scores

    origin score x score_discount**d x (product of edge factors) x document factor

where the factors depend on the strategy (every factor is in (0, 1], so the total multiplier,
reported as `StageScores.expansion_discount`, is too):

| strategy   | edges followed                    | edge factor                 | document factor |
|------------|-----------------------------------|-----------------------------|-----------------|
| BASIC      | all                               | 1                           | 1               |
| WEIGHTED   | weight >= min_edge_weight, > 0    | weight                      | 1               |
| TYPE_AWARE | all                               | type factor                 | 1               |
| SMART      | weight > 0                        | weight x type factor        | diversity       |

The type factor is 1 for a preferred edge kind (or when none is preferred) and
NON_PREFERRED_FACTOR otherwise. The diversity factor is 1 for a chunk whose document is not yet
in the result (hits plus chunks already added) and SEEN_DOCUMENT_FACTOR otherwise. Depth decay,
`score_discount**d`, is shared by every strategy.
"""

from __future__ import annotations

import math
from collections.abc import Container

from core.models import Edge, EdgeKind
from core.retrieve.expansion_policy import ExpansionPolicy, ExpansionStrategy

__all__ = [
    "NON_PREFERRED_FACTOR",
    "SEEN_DOCUMENT_FACTOR",
    "document_factor",
    "edge_factor",
    "min_document_factor",
    "type_factor",
]

NON_PREFERRED_FACTOR = 0.5
"""Edge factor of an edge whose kind is not preferred (TYPE_AWARE, SMART)."""

SEEN_DOCUMENT_FACTOR = 0.5
"""SMART: factor of a chunk from a document already in the result."""

_WEIGHTED = frozenset({ExpansionStrategy.WEIGHTED, ExpansionStrategy.SMART})
_TYPED = frozenset({ExpansionStrategy.TYPE_AWARE, ExpansionStrategy.SMART})


def type_factor(kind: EdgeKind, preferred: tuple[EdgeKind, ...]) -> float:
    """1.0 when `kind` is preferred or nothing is; NON_PREFERRED_FACTOR otherwise."""
    return 1.0 if not preferred or kind in preferred else NON_PREFERRED_FACTOR


def edge_factor(edge: Edge, policy: ExpansionPolicy) -> float | None:
    """The factor `edge` contributes to a path under `policy`, or None when it is not followed.

    Weight-using strategies do not follow edges with a non-finite or non-positive weight; weights
    above 1 count as 1.
    """
    factor = 1.0
    strategy = policy.strategy
    if strategy in _WEIGHTED:
        weight = float(edge.weight)
        if not math.isfinite(weight) or weight <= 0.0:
            return None
        if strategy is ExpansionStrategy.WEIGHTED and weight < policy.min_edge_weight:
            return None
        factor = min(weight, 1.0)
    if strategy in _TYPED:
        factor *= type_factor(edge.kind, policy.preferred_edge_types)
    return factor


def document_factor(document_id: str, seen: Container[str], policy: ExpansionPolicy) -> float:
    """SMART: 1.0 for a document not in `seen`, SEEN_DOCUMENT_FACTOR otherwise; 1.0 elsewhere."""
    if policy.strategy is not ExpansionStrategy.SMART or document_id not in seen:
        return 1.0
    return SEEN_DOCUMENT_FACTOR


def min_document_factor(policy: ExpansionPolicy) -> float:
    """The smallest document factor `policy` can give a chunk."""
    return SEEN_DOCUMENT_FACTOR if policy.strategy is ExpansionStrategy.SMART else 1.0
