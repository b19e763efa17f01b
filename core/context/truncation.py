"""Hard truncation of a block at a word boundary: the last resort for the first context block."""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["TRUNCATION_MARK", "truncate_block"]

TRUNCATION_MARK = "…"

_WORD_END = re.compile(r"\S(?=\s|$)")


def truncate_block(header: str, body: str, fits: Callable[[str], bool]) -> str | None:
    """`header + body` cut after a word and marked with `TRUNCATION_MARK` so that `fits` holds.

    The longest such cut is found by binary search over the word ends (exact for a monotonic
    `fits`); None when not even the first word fits. Every returned text satisfies `fits`.
    """
    ends = [match.end() for match in _WORD_END.finditer(body)]
    low, high, best = 0, len(ends) - 1, None
    while low <= high:
        middle = (low + high) // 2
        candidate = header + body[: ends[middle]] + TRUNCATION_MARK
        if fits(candidate):
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    return best
