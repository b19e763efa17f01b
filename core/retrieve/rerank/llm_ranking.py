"""The LLM rerank prompt and the parsing of its reply. Pure functions.

The prompt lists the passages as numbered excerpts (1-based), asks for a JSON array of excerpt
numbers, most relevant first, and ends on the array's opening bracket ("Ranking: [") so that a
completion model continues it. The reply is read leniently: the first JSON array in it that
names at least one known excerpt is the ranking (a reply that continues the bracket, "2, 1]",
counts too); numbers out of range, repeats and non-numbers are ignored; excerpts it leaves out
follow in their original (fused) order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

__all__ = [
    "RERANK_PROMPT",
    "build_rerank_prompt",
    "excerpt_label",
    "fallback_scores",
    "parse_ranking",
    "parse_reply",
    "scores_from_order",
]

RERANK_PROMPT = (
    "Rank the excerpts by how well they answer the question.\n\n"
    "Question: {query}\n\n"
    "{excerpts}\n\n"
    "Reply with a JSON array of the excerpt numbers, most relevant first, for example "
    "[{example}].\n"
    "Ranking: ["
)
_SPACE = re.compile(r"\s+")
_DECODER = json.JSONDecoder()


def excerpt_label(number: int) -> str:
    """How excerpt `number` (1-based) is named in the prompt."""
    return f"Excerpt {number}"


def _clip(text: str, max_chars: int) -> str:
    """`text` with whitespace collapsed, cut at a word boundary to at most `max_chars` (+ "…")."""
    flat = _SPACE.sub(" ", text).strip()
    if len(flat) <= max_chars:
        return flat
    cut = flat[:max_chars]
    space = cut.rfind(" ")
    return (cut[:space] if space > max_chars // 2 else cut).rstrip() + "…"


def build_rerank_prompt(query: str, passages: Sequence[str], max_passage_chars: int) -> str:
    """The completion-style prompt asking for a JSON ranking of `passages`."""
    excerpts = "\n".join(
        f"{excerpt_label(i)}: {_clip(passage, max_passage_chars)}"
        for i, passage in enumerate(passages, start=1)
    )
    example = ", ".join(str(i) for i in range(min(len(passages), 3), 0, -1))
    return RERANK_PROMPT.format(query=query.strip(), excerpts=excerpts, example=example)


def _number(item: object, count: int) -> int | None:
    """A 1-based excerpt number from a JSON item (int, integral float or digit string)."""
    if isinstance(item, bool):
        return None
    if isinstance(item, float) and item.is_integer():
        item = int(item)
    if isinstance(item, str) and item.strip().isdigit():
        item = int(item.strip())
    if isinstance(item, int) and 1 <= item <= count:
        return item
    return None


def _known_numbers(items: list[object], count: int) -> list[int]:
    """Distinct known excerpt numbers of a JSON array, first occurrence kept."""
    numbers: dict[int, None] = {}
    for item in items:
        number = _number(item, count)
        if number is not None:
            numbers.setdefault(number, None)
    return list(numbers)


def parse_ranking(reply: str, count: int) -> list[int] | None:
    """The 0-based order of `count` passages the reply ranks, or None when it ranks none.

    The result always holds every index once: the ranked ones first, the rest in input order.
    """
    start = reply.find("[")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(reply, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, list):
            numbers = _known_numbers(value, count)
            if numbers:
                ranked = [n - 1 for n in numbers]
                chosen = set(ranked)
                return ranked + [i for i in range(count) if i not in chosen]
        start = reply.find("[", start + 1)
    return None


def parse_reply(reply: str, count: int) -> list[int] | None:
    """`parse_ranking` of the reply, or of "[" + reply when it continues the prompt's bracket."""
    order = parse_ranking(reply, count)
    return order if order is not None else parse_ranking("[" + reply, count)


def scores_from_order(order: Sequence[int]) -> tuple[float, ...]:
    """Scores per passage from a 0-based order: (n - position) / n, so 1.0 for the first."""
    count = len(order)
    scores = [0.0] * count
    for position, index in enumerate(order):
        scores[index] = (count - position) / count
    return tuple(scores)


def fallback_scores(count: int) -> tuple[float, ...]:
    """Scores that keep the input (fused) order."""
    return scores_from_order(range(count))
