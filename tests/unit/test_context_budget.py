"""Tests for core.context.budget: units, reserves and validation messages."""

from __future__ import annotations

import pytest

from core.context.budget import BudgetUnit, ContextBudget
from core.errors import InvalidArgument


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({}, "budget", "set exactly one of max_tokens or max_chars"),
        ({"max_tokens": 5, "max_chars": 5}, "budget", "set exactly one of max_tokens or max_chars"),
        ({"max_tokens": 0}, "budget.max_tokens", "must be an integer >= 1, got 0"),
        ({"max_tokens": 2.5}, "budget.max_tokens", "must be an integer >= 1, got 2.5"),
        ({"max_chars": -1}, "budget.max_chars", "must be an integer >= 1, got -1"),
        ({"max_chars": True}, "budget.max_chars", "must be an integer >= 1, got True"),
        (
            {"max_tokens": 10, "reserve_system_tokens": -1},
            "budget.reserve_system_tokens",
            "must be an integer >= 0, got -1",
        ),
        (
            {"max_tokens": 10, "reserve_query_tokens": 1.5},
            "budget.reserve_query_tokens",
            "must be an integer >= 0, got 1.5",
        ),
        (
            {"max_chars": 10, "reserve_query_tokens": 3},
            "budget.reserve_query_tokens",
            "applies only to a max_tokens budget; set it to 0 or use max_tokens",
        ),
        (
            {"max_tokens": 100, "reserve_system_tokens": 60, "reserve_query_tokens": 40},
            "budget.max_tokens",
            "100 leaves 0 tokens for context after reserving 60 for the system prompt and 40 "
            "for the query; it must leave at least 1; raise max_tokens or lower the reserves",
        ),
    ],
    ids=[
        "neither",
        "both",
        "zero_tokens",
        "float_tokens",
        "negative_chars",
        "bool_chars",
        "negative_system_reserve",
        "float_query_reserve",
        "reserve_with_chars",
        "reserves_leave_nothing",
    ],
)
def test_budget_validation(kwargs: dict[str, float], field: str, message: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        ContextBudget(**kwargs)  # type: ignore[arg-type]  # invalid on purpose
    assert str(caught.value) == f"{field}: {message}"
    assert caught.value.violations[0].field == field


def test_limit_and_unit() -> None:
    assert ContextBudget(max_tokens=7).limit == 7
    assert ContextBudget(max_tokens=10_000_000).limit == 10_000_000, "upper caps are server policy"
    assert ContextBudget(max_chars=9).limit == 9
    assert ContextBudget(max_chars=9).unit is BudgetUnit.CHARS
    budget = ContextBudget(max_tokens=100, reserve_system_tokens=60, reserve_query_tokens=39)
    assert (budget.limit, budget.unit) == (1, BudgetUnit.TOKENS)
    assert ContextBudget(max_chars=9, reserve_system_tokens=0).limit == 9
