"""The link-graph expansion policy: which strategy, how far, how many, and how scores decay.

Validation messages name the RetrieveRequest field (`expansion.hops`, ...) so the edge can pass
them on unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from core.errors import InvalidArgument
from core.models import EdgeKind

__all__ = [
    "MAX_HOPS",
    "MAX_PER_HIT_LIMIT",
    "MAX_TOTAL_LIMIT",
    "ExpansionPolicy",
    "ExpansionStrategy",
    "parse_edge_kinds",
]

MAX_HOPS = 3
MAX_PER_HIT_LIMIT = 20
MAX_TOTAL_LIMIT = 100


class ExpansionStrategy(str, Enum):  # noqa: UP042 - same base as the other domain enums
    """How neighbours are picked and scored (see core/retrieve/expansion_strategies.py)."""

    BASIC = "basic"  # breadth-first over every edge
    WEIGHTED = "weighted"  # only edges with weight >= min_edge_weight; weight multiplies the score
    TYPE_AWARE = "type_aware"  # every edge; edges of a preferred kind score higher
    SMART = "smart"  # edge weight x type preference x diversity of source documents


@dataclass(frozen=True, slots=True)
class ExpansionPolicy:
    """How many linked chunks to add around the hits. Disabled by default.

    `max_per_hit` and `max_total` cap the chunks added (per origin hit, overall); `hops` (1-3) is
    the longest graph distance from a hit; an expanded chunk at distance d scores
    `origin score x score_discount**d x strategy factor`. `min_edge_weight` applies to the
    WEIGHTED strategy; `preferred_edge_types` to TYPE_AWARE and SMART.
    """

    enabled: bool = False
    strategy: ExpansionStrategy = ExpansionStrategy.BASIC
    max_per_hit: int = 2
    max_total: int = 10
    hops: int = 1
    score_discount: float = 0.5
    min_edge_weight: float = 0.5
    preferred_edge_types: tuple[EdgeKind, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.strategy, ExpansionStrategy):
            accepted = ", ".join(s.value for s in ExpansionStrategy)
            raise InvalidArgument.field(
                "expansion.strategy", f"must be one of {accepted}, got {self.strategy!r}"
            )
        _check_int("expansion.max_per_hit", self.max_per_hit, 1, MAX_PER_HIT_LIMIT)
        _check_int("expansion.max_total", self.max_total, 1, MAX_TOTAL_LIMIT)
        _check_int("expansion.hops", self.hops, 1, MAX_HOPS)
        discount = self.score_discount
        if not _is_number(discount) or not 0.0 < discount <= 1.0:
            raise InvalidArgument.field(
                "expansion.score_discount", f"must be in (0, 1], got {discount!r}"
            )
        weight = self.min_edge_weight
        if not _is_number(weight) or not 0.0 <= weight <= 1.0:
            raise InvalidArgument.field(
                "expansion.min_edge_weight", f"must be in [0, 1], got {weight!r}"
            )
        for kind in self.preferred_edge_types:
            if not isinstance(kind, EdgeKind):
                raise InvalidArgument.field(
                    "expansion.preferred_edge_types",
                    f"unknown edge type {kind!r}; use {_EDGE_NAMES}",
                )


_EDGE_NAMES = ", ".join(f'"{kind.value}"' for kind in EdgeKind)


def parse_edge_kinds(names: Sequence[str]) -> tuple[EdgeKind, ...]:
    """Edge kinds from their names ("link", "next", "prev"; case and surrounding space ignored).

    Repeats are dropped, first occurrence kept. Raises InvalidArgument naming
    `expansion.preferred_edge_types` for an unknown name.
    """
    kinds: dict[EdgeKind, None] = {}
    for name in names:
        try:
            kinds.setdefault(EdgeKind(name.strip().lower()), None)
        except ValueError:
            raise InvalidArgument.field(
                "expansion.preferred_edge_types", f"unknown edge type {name!r}; use {_EDGE_NAMES}"
            ) from None
    return tuple(kinds)


def _is_number(value: object) -> bool:
    """A finite int or float, not a bool."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _check_int(name: str, value: object, low: int, high: int) -> None:
    """InvalidArgument naming `name` unless `value` is an integer in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidArgument.field(name, f"must be between {low} and {high}, got {value!r}")
