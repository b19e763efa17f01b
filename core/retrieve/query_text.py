"""Query preprocessing: normalise user text and enforce the length cap."""

from __future__ import annotations

import re
import unicodedata

from core.errors import InvalidArgument

_WHITESPACE = re.compile(r"\s+")


def normalize_query(text: str, max_chars: int) -> str:
    """Strip control and format characters, collapse whitespace, trim; reject blank or over-long text.

    The cap applies to the normalised text and is never applied by silent truncation.
    """
    cleaned = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch) not in {"Cc", "Cf", "Cs", "Co", "Cn"}
    )
    normalized = _WHITESPACE.sub(" ", cleaned).strip()
    if not normalized:
        raise InvalidArgument.field(
            "query", "must not be empty or whitespace; send the question text"
        )
    if len(normalized) > max_chars:
        raise InvalidArgument.field(
            "query",
            f"is {len(normalized)} characters long; the limit is {max_chars}; shorten the query",
        )
    return normalized
