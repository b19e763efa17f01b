"""Optional query rewriting: the generator turns one question into a few search queries."""

from __future__ import annotations

import re

from core.answer.protocol import GenerationParams, GenerationRequest, Generator, TextDelta
from core.errors import InvalidArgument
from core.retrieve.query_text import normalize_query

MAX_QUERIES = 3
REWRITE_PROMPT = (
    "Rewrite the question as up to {n} short, self-contained search queries for a documentation "
    "search engine, one per line, without numbering.\n\nQuestion: {query}\nSearch queries:\n"
)
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s*")


def parse_rewrites(
    text: str, original: str, limit: int = MAX_QUERIES, max_chars: int = 300
) -> tuple[str, ...]:
    """The original query first, then up to `limit` distinct rewrites parsed one per line."""
    queries = [original]
    seen = {original.casefold()}
    for line in text.splitlines():
        candidate = _BULLET.sub("", line).strip().strip('"')
        if not candidate or len(candidate) > max_chars or candidate.casefold() in seen:
            continue
        try:
            candidate = normalize_query(candidate, max_chars)
        except InvalidArgument:
            continue
        seen.add(candidate.casefold())
        queries.append(candidate)
        if len(queries) > limit:
            break
    return tuple(queries)


async def rewrite_query(generator: Generator, query: str) -> tuple[str, ...]:
    """Ask the generator for rewrites; the extractive generator cannot rewrite, so it returns (query,)."""
    if generator.kind == "extractive":
        return (query,)
    prompt = REWRITE_PROMPT.format(n=MAX_QUERIES, query=query)
    request = GenerationRequest(
        prompt=prompt,
        query=query,
        passages=(),
        params=GenerationParams(temperature=0.0, max_tokens=96, stop=("\n\n",)),
    )
    parts = [
        event.text async for event in generator.stream(request) if isinstance(event, TextDelta)
    ]
    return parse_rewrites("".join(parts), query)
