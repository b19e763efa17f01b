"""Turning free user text into a safe Tantivy query string."""

from __future__ import annotations


def sanitize_query(text: str, max_terms: int) -> str:
    """Lower-cased alphanumeric words of `text` joined by spaces; "" when there are none.

    Every other character becomes a separator, so nothing reaches the query parser that it could
    read as syntax (`:`, `()`, quotes, `+`/`-`, `^`); lower-casing neutralises the AND/OR/NOT
    operators. At most `max_terms` words are kept.
    """
    cleaned = "".join(ch if ch.isalnum() else " " for ch in text.lower())
    return " ".join(cleaned.split()[:max_terms])
