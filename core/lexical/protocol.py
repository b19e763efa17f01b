"""`LexicalIndex`: the contract of a BM25 index keyed by store row ids (Tantivy, Milvus)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from core.store.records import LexicalRow


class LexicalIndex(Protocol):
    """A BM25 index that a collection mirrors its committed store changes into.

    `remote`: whether a search waits on another server (Milvus) rather than running here
    (Tantivy): the retrieval pipeline overlaps a remote search with the other stages and runs a
    local one on the thread that needs its result (benchmarks/results/ghz_lexical_inline.md).
    """

    remote: bool

    def sequence(self) -> int:
        """The store sequence the index reflects."""
        ...

    def add(self, rows: Sequence[LexicalRow]) -> None:
        """Stage rows for the next commit, replacing any with the same row id."""
        ...

    def remove(self, row_ids: Sequence[int]) -> None:
        """Stage deletion of the given row ids (unknown ids are ignored)."""
        ...

    def commit(self, sequence: int) -> None:
        """Publish staged changes as of store `sequence`."""
        ...

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Up to k (row id, BM25 score) pairs, best first; never raises on user text."""
        ...

    def close(self) -> None:
        """Release the index."""
        ...
