"""Validation of ExpansionPolicy and parse_edge_kinds: each message names the request field."""

from __future__ import annotations

import pytest

from core.errors import InvalidArgument
from core.models import EdgeKind
from core.retrieve.expansion_policy import ExpansionPolicy, ExpansionStrategy, parse_edge_kinds


def test_defaults_match_the_proto() -> None:
    policy = ExpansionPolicy()
    assert (policy.enabled, policy.strategy) == (False, ExpansionStrategy.BASIC)
    assert (policy.max_per_hit, policy.max_total, policy.hops) == (2, 10, 1)
    assert (policy.score_discount, policy.min_edge_weight) == (0.5, 0.5)
    assert policy.preferred_edge_types == ()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"hops": 0}, "expansion.hops: must be between 1 and 3, got 0"),
        ({"hops": 4}, "expansion.hops: must be between 1 and 3, got 4"),
        ({"hops": True}, "expansion.hops: must be between 1 and 3, got True"),
        ({"max_per_hit": 0}, "expansion.max_per_hit: must be between 1 and 20, got 0"),
        ({"max_per_hit": 21}, "expansion.max_per_hit: must be between 1 and 20, got 21"),
        ({"max_total": 0}, "expansion.max_total: must be between 1 and 100, got 0"),
        ({"max_total": 2.0}, "expansion.max_total: must be between 1 and 100, got 2.0"),
        ({"score_discount": 0.0}, "expansion.score_discount: must be in (0, 1], got 0.0"),
        ({"score_discount": 1.5}, "expansion.score_discount: must be in (0, 1], got 1.5"),
        (
            {"score_discount": float("nan")},
            "expansion.score_discount: must be in (0, 1], got nan",
        ),
        ({"min_edge_weight": -0.1}, "expansion.min_edge_weight: must be in [0, 1], got -0.1"),
        ({"min_edge_weight": 1.1}, "expansion.min_edge_weight: must be in [0, 1], got 1.1"),
        (
            {"strategy": "smart"},
            "expansion.strategy: must be one of basic, weighted, type_aware, smart, got 'smart'",
        ),
        (
            {"preferred_edge_types": ("link",)},
            "expansion.preferred_edge_types: unknown edge type 'link'; "
            'use "link", "next", "prev"',
        ),
    ],
    ids=lambda value: (
        ",".join(f"{k}={v!r}" for k, v in value.items()) if isinstance(value, dict) else ""
    ),
)
def test_invalid_values_name_the_field(changes: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        ExpansionPolicy(**changes)  # type: ignore[arg-type]
    assert str(caught.value) == message
    assert caught.value.violations[0].field == message.split(":")[0]


def test_boundary_values_are_accepted() -> None:
    policy = ExpansionPolicy(
        max_per_hit=20, max_total=100, hops=3, score_discount=1.0, min_edge_weight=0.0
    )
    assert policy.hops == 3
    assert ExpansionPolicy(max_per_hit=1, max_total=1, hops=1, min_edge_weight=1).max_total == 1


def test_parse_edge_kinds() -> None:
    assert parse_edge_kinds([" Link", "next", "LINK"]) == (EdgeKind.LINK, EdgeKind.NEXT)
    assert parse_edge_kinds([]) == ()
    with pytest.raises(InvalidArgument) as caught:
        parse_edge_kinds(["next", "see-also"])
    assert str(caught.value) == (
        'expansion.preferred_edge_types: unknown edge type \'see-also\'; use "link", "next", "prev"'
    )
