"""The budget arithmetic of fitting a prompt into a generator's context window."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.answer.context_window import (
    CHARS_PER_TOKEN,
    MIN_CONTEXT_TOKENS,
    ContextWindow,
    first_budget,
    no_room_error,
    smaller_budget,
)
from core.context.budget import ContextBudget


def window(tokens: int = 2048, output: int = 256, per_token: float = 1.0) -> ContextWindow:
    return ContextWindow(tokens, output, lambda text: len(text.split()), "words", per_token)


def test_room_is_what_the_template_question_and_answer_leave() -> None:
    assert window(2048).room(fixed_tokens=100, output_tokens=256) == 1692


def test_a_budget_inside_the_room_is_kept_as_it_is() -> None:
    requested = ContextBudget(max_tokens=1000)
    assert first_budget(requested, room=1692, window=window()) is requested
    chars = ContextBudget(max_chars=3000)
    assert first_budget(chars, room=1692, window=window()) is chars


def test_a_larger_token_budget_is_capped_by_the_room_in_budget_units() -> None:
    assert first_budget(ContextBudget(max_tokens=5000), 1692, window()).max_tokens == 1692
    estimated = window(per_token=1 / 1.25)  # 1.25 generator tokens per budget token
    assert first_budget(ContextBudget(max_tokens=5000), 1000, estimated).max_tokens == 800


def test_a_larger_character_budget_is_capped_on_the_low_side() -> None:
    capped = first_budget(ContextBudget(max_chars=100_000), 1000, window())
    assert capped.max_chars == 1000 * CHARS_PER_TOKEN


def test_smaller_budget_scales_by_the_overflow_with_a_margin() -> None:
    shrunk = smaller_budget(ContextBudget(max_tokens=1000), context_tokens=2000, room=1000)
    assert shrunk.max_tokens == 475  # 1000 * (1000 / 2000) * 0.95
    chars = smaller_budget(ContextBudget(max_chars=9000), context_tokens=3000, room=2000)
    assert chars.max_chars == 5700


@given(
    limit=st.integers(1, 200_000),
    context=st.integers(0, 1_000_000),
    room=st.integers(1, 1_000_000),
    chars=st.booleans(),
)
def test_smaller_budget_always_shrinks_and_stays_valid(
    limit: int, context: int, room: int, chars: bool
) -> None:
    current = ContextBudget(max_chars=limit) if chars else ContextBudget(max_tokens=limit)
    shrunk = smaller_budget(current, context, room)
    assert shrunk.unit is current.unit
    assert 1 <= shrunk.limit
    assert shrunk.limit < current.limit or current.limit == 1


def test_no_room_names_the_numbers_and_the_fix() -> None:
    error = no_room_error(window(512, 500), fixed_tokens=40, output_tokens=500)
    assert error.violations[0].field == "max_tokens"
    text = str(error)
    assert "512 tokens" in text and "take 40" in text and "leaves -28" in text
    assert f"at least {MIN_CONTEXT_TOKENS}" in text and "lower max_tokens" in text
