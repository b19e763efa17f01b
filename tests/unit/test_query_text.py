"""Tests for core.retrieve.query_text.normalize_query: cleaning, the length cap, blank queries."""

from __future__ import annotations

import pytest

from core.errors import InvalidArgument
from core.retrieve.query_text import normalize_query


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  how   do\tI\n copy? ", "how do I copy?"),
        ("zero\u200bwidth and\x00nul\x07bell", "zerowidth andnulbell"),
        ("line\r\nbreak\u2028sep", "line break sep"),
        ("ünïcödé ✓", "ünïcödé ✓"),
    ],
    ids=["whitespace", "control_and_format", "line_separators", "unicode_kept"],
)
def test_normalises(text: str, expected: str) -> None:
    assert normalize_query(text, 100) == expected


def test_cap_applies_to_the_normalised_text() -> None:
    assert normalize_query("a" * 10 + " " * 50, 10) == "a" * 10


def test_over_the_cap_is_rejected_not_truncated() -> None:
    with pytest.raises(InvalidArgument) as caught:
        normalize_query("word " * 5, 20)
    assert str(caught.value) == "query: is 24 characters long; the limit is 20; shorten the query"
    assert caught.value.violations[0].field == "query"


@pytest.mark.parametrize("text", ["", "   ", "\x00\u200b\n"], ids=["empty", "spaces", "invisible"])
def test_blank_is_rejected(text: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        normalize_query(text, 100)
    assert str(caught.value) == "query: must not be empty or whitespace; send the question text"
