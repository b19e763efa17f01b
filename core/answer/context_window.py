"""Fitting an Answer's prompt into the generator's context window.

A language model reads at most `tokens` of its own tokens: the rendered prompt plus the answer it
may write (`max_tokens`). The retrieval budget is counted in another unit (the embedding model's
tokens, or characters), so fitting takes two steps. `first_budget` caps the requested budget by
the room the template and question leave; once the prompt is rendered and counted the way the
generator counts, `smaller_budget` shrinks the budget in proportion to the overflow when the
prompt still does not fit. Assembly packs whole chunks and truncates the last one, so the context
grows about linearly with its budget and one correction is nearly always enough.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from core.context.budget import BudgetUnit, ContextBudget
from core.errors import InvalidArgument

__all__ = [
    "MAX_FIT_ATTEMPTS",
    "MIN_CONTEXT_TOKENS",
    "ContextWindow",
    "budget_lowered_warning",
    "first_budget",
    "no_fit_error",
    "no_room_error",
    "smaller_budget",
]

MIN_CONTEXT_TOKENS = 32
"""Fewer tokens of room than this for context is refused: no passage would fit usefully."""

MAX_FIT_ATTEMPTS = 4
"""Retrievals one Answer may run to fit its prompt (the first guess and three corrections)."""

FIT_MARGIN = 0.95
"""A corrected budget aims this far below the exact proportion, so the next try lands inside."""

CHARS_PER_TOKEN = 3
"""First guess for a character budget: characters per generator token, on the low side."""


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """What a generator can read: `tokens` in all, prompt and answer together.

    `count` measures a prompt the way the generator does (exactly, or an estimate that errs
    high); `counted_as` says which, for messages. `budget_per_token` converts generator tokens
    into token-budget units for the first guess (embedding-model tokens per generator token).
    """

    tokens: int
    output_tokens: int  # the generator's default answer length (its max_tokens setting)
    count: Callable[[str], int]
    counted_as: str
    budget_per_token: float = 1.0

    def room(self, fixed_tokens: int, output_tokens: int) -> int:
        """Generator tokens left for context once the template, question and answer are placed."""
        return self.tokens - output_tokens - fixed_tokens


def first_budget(requested: ContextBudget, room: int, window: ContextWindow) -> ContextBudget:
    """`requested`, or a smaller budget of the same unit when it cannot fit into `room` tokens."""
    if requested.unit is BudgetUnit.TOKENS:
        cap = max(1, math.floor(room * window.budget_per_token))
        return requested if requested.limit <= cap else ContextBudget(max_tokens=cap)
    cap = max(1, room * CHARS_PER_TOKEN)
    return requested if requested.limit <= cap else ContextBudget(max_chars=cap)


def smaller_budget(current: ContextBudget, context_tokens: int, room: int) -> ContextBudget:
    """A budget for a context that measured `context_tokens` generator tokens but may take only
    `room`: scaled by the overflow (with `FIT_MARGIN`), always strictly smaller, at least 1."""
    factor = room / max(1, context_tokens) * FIT_MARGIN
    limit = max(1, min(current.limit - 1, math.floor(current.limit * factor)))
    if current.unit is BudgetUnit.TOKENS:
        return ContextBudget(max_tokens=limit)
    return ContextBudget(max_chars=limit)


def no_room_error(window: ContextWindow, fixed_tokens: int, output_tokens: int) -> InvalidArgument:
    """The error for a question and answer length that leave (almost) no room for context."""
    room = window.room(fixed_tokens, output_tokens)
    return InvalidArgument.field(
        "max_tokens",
        f"the generator's context window is {window.tokens} tokens: the prompt template and "
        f"question take {fixed_tokens} ({window.counted_as}) and the answer may take "
        f"{output_tokens}, which leaves {room} for context (at least {MIN_CONTEXT_TOKENS} "
        "needed); lower max_tokens or shorten the question",
    )


def no_fit_error(
    window: ContextWindow, last_budget: ContextBudget, retrievals: int
) -> InvalidArgument:
    """The error when no retrieved passage fits beside the template, question and answer."""
    return InvalidArgument.field(
        "retrieve.budget",
        f"no retrieved passage fits the generator's {window.tokens}-token context window beside "
        f"the prompt template, question and answer (tried budgets down to "
        f"{_describe(last_budget)} in {retrievals} retrievals); lower max_tokens, shorten "
        "the question or raise generator.context_window_tokens if the model allows more",
    )


def budget_lowered_warning(
    requested: ContextBudget, applied: ContextBudget, window: ContextWindow, output_tokens: int
) -> str:
    """The warning an Answer's retrieval carries when its budget was lowered to fit."""
    return (
        f"context budget lowered from {_describe(requested)} to {_describe(applied)} to fit the "
        f"generator's {window.tokens}-token context window (answer up to {output_tokens} "
        f"tokens; prompt {window.counted_as})"
    )


def _describe(budget: ContextBudget) -> str:
    unit = "tokens" if budget.unit is BudgetUnit.TOKENS else "characters"
    return f"{budget.limit} {unit}"
