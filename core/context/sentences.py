"""Sentence spans of a chunk text, for extractive summaries.

A sentence ends after `.`, `!` or `?` (and one closing quote or bracket right after it) that
is followed by whitespace, and at every blank line. Spans exclude the surrounding whitespace,
so the text between two adjacent spans is whitespace only. Code without sentence punctuation
stays one sentence up to the next blank line, so code is never cut mid-line.
"""

from __future__ import annotations

import re

__all__ = ["sentence_spans"]

_BOUNDARY = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+|\n[ \t]*\n\s*")
_NON_SPACE = re.compile(r"\S")


def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) offsets of each sentence of `text`, in order; () when `text` is blank."""
    spans: list[tuple[int, int]] = []
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        _append(spans, text, start, boundary.start())
        start = boundary.end()
    _append(spans, text, start, len(text))
    return tuple(spans)


def _append(spans: list[tuple[int, int]], text: str, start: int, end: int) -> None:
    """Add text[start:end] without its surrounding whitespace, unless it is blank."""
    first = _NON_SPACE.search(text, start, end)
    if first is None:
        return
    stop = end
    while stop > first.start() and text[stop - 1].isspace():
        stop -= 1
    spans.append((first.start(), stop))
