"""`MilvusLexicalIndex`: BM25 through Milvus' full-text function (the `LexicalIndex` protocol).

Milvus derives each chunk's sparse BM25 vector from its `lexical` text when the store inserts
the entity (the BM25 function of the chunk schema), so there is nothing to add, remove or
commit here. Queries go through the same `sanitize_query` as Tantivy (alphanumeric words, lower
case, capped), so user text is never query syntax. milvus-lite returns BM25 scores negated
(smaller is better) while a Milvus cluster returns them positive; both are returned as their
magnitude, best first, which is the BM25 score either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.lexical.query import sanitize_query
from core.milvus.dense import MAX_TOP_K
from core.milvus.store import MilvusStore
from core.store.records import LexicalRow

MAX_QUERY_TERMS = 64


class MilvusLexicalIndex:
    """BM25 search of one Milvus-backed collection."""

    remote = True
    """Every search is a call to the Milvus server (core.lexical.protocol)."""

    def __init__(self, store: MilvusStore, max_query_terms: int = MAX_QUERY_TERMS) -> None:
        self._store = store
        self._client: Any = store.client
        self._max_terms = max_query_terms

    def sequence(self) -> int:
        """Always the store's: Milvus indexes a chunk when it is written."""
        return self._store.sequence()

    def add(self, rows: Sequence[LexicalRow]) -> None:
        """Nothing to do: the BM25 function indexed these rows when the store wrote them."""

    def remove(self, row_ids: Sequence[int]) -> None:
        """Nothing to do: the store's delete removed them."""

    def commit(self, sequence: int) -> None:
        """Nothing to do: Milvus serves a write once it is acknowledged."""

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Up to k (row id, BM25 score) pairs, best first. Never raises on user text."""
        text = sanitize_query(query, self._max_terms)
        if not text or k < 1:
            return []
        results = self._client.search(
            self._store.chunks,
            data=[text],
            anns_field="sparse",
            limit=min(k, MAX_TOP_K),
            search_params={"metric_type": "BM25"},
            output_fields=["row_id"],
        )
        hits = [(int(hit["row_id"]), abs(float(hit["distance"]))) for hit in results[0]]
        return sorted(hits, key=lambda hit: (-hit[1], hit[0]))

    def close(self) -> None:
        """Nothing to release."""
