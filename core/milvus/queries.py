"""Reading every entity that matches an expression, in one query when Milvus' result window
holds them all (a document's chunks, a batch of ids) and through a query iterator otherwise."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MAX_QUERY_RESULTS = 16_384
"""Milvus' largest offset + limit of one query."""


def query_all(
    client: Any, collection: str, expression: str, fields: list[str]
) -> list[dict[str, Any]]:
    """Every entity of `collection` matching `expression` ("" = all), with `fields`."""
    found = client.query(
        collection, filter=expression, output_fields=fields, limit=MAX_QUERY_RESULTS
    )
    if len(found) < MAX_QUERY_RESULTS:
        return [dict(entity) for entity in found]
    return [e for page in query_pages(client, collection, expression, fields) for e in page]


def query_pages(
    client: Any, collection: str, expression: str, fields: list[str], batch_size: int = 4096
) -> Iterator[list[dict[str, Any]]]:
    """The matches of `expression` in pages of at most `batch_size` (a query iterator)."""
    iterator = client.query_iterator(
        collection,
        batch_size=min(batch_size, MAX_QUERY_RESULTS),
        filter=expression,
        output_fields=fields,
    )
    try:
        while page := iterator.next():
            yield [dict(entity) for entity in page]
    finally:
        iterator.close()
