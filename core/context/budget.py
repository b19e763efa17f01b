"""The context budget: a token budget with reserves for the system prompt and query, or characters."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from core.errors import InvalidArgument

__all__ = ["BudgetUnit", "ContextBudget"]


class BudgetUnit(str, Enum):
    """What a budget counts."""

    TOKENS = "tokens"
    CHARS = "chars"


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """Upper bound on the assembled context: tokens or characters, exactly one of them.

    A token budget may reserve room for the parts of the prompt that are not context:
    the context gets `max_tokens - reserve_system_tokens - reserve_query_tokens` (`limit`),
    which must be at least 1. Reserves apply to token budgets only. Only structure is checked
    here; the largest budget a caller may ask for is server policy.
    """

    max_tokens: int | None = None
    max_chars: int | None = None
    reserve_system_tokens: int = 0
    reserve_query_tokens: int = 0

    def __post_init__(self) -> None:
        if (self.max_tokens is None) == (self.max_chars is None):
            raise InvalidArgument.field("budget", "set exactly one of max_tokens or max_chars")
        if self.max_tokens is not None:
            _check_int("budget.max_tokens", self.max_tokens, minimum=1)
        if self.max_chars is not None:
            _check_int("budget.max_chars", self.max_chars, minimum=1)
        reserves = {
            "budget.reserve_system_tokens": self.reserve_system_tokens,
            "budget.reserve_query_tokens": self.reserve_query_tokens,
        }
        for field, value in reserves.items():
            _check_int(field, value, minimum=0)
            if value and self.max_tokens is None:
                raise InvalidArgument.field(
                    field, "applies only to a max_tokens budget; set it to 0 or use max_tokens"
                )
        if self.max_tokens is not None and self.limit < 1:
            raise InvalidArgument.field(
                "budget.max_tokens",
                f"{self.max_tokens} leaves {self.limit} tokens for context after reserving "
                f"{self.reserve_system_tokens} for the system prompt and "
                f"{self.reserve_query_tokens} for the query; it must leave at least 1; "
                "raise max_tokens or lower the reserves",
            )

    @property
    def unit(self) -> BudgetUnit:
        """Tokens or characters."""
        return BudgetUnit.TOKENS if self.max_tokens is not None else BudgetUnit.CHARS

    @property
    def limit(self) -> int:
        """The room for context in the budget's unit: max_chars, or max_tokens less the reserves."""
        if self.max_tokens is not None:
            return self.max_tokens - self.reserve_system_tokens - self.reserve_query_tokens
        return self.max_chars or 0


def _check_int(field: str, value: int, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidArgument.field(field, f"must be an integer >= {minimum}, got {value!r}")
