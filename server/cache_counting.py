"""Stats' cache counters over every process of the server: what one process counts, their sum.

Each process caches for itself (query embeddings and retrieval results), so one process's
counters show only the calls its connections brought. The primary (which serves every Stats: a
reader forwards it there) counts its own and asks each reader for its counts over the reader's
link (server/reader_supervisor.py), waiting at most `READER_ANSWER_S` seconds (less when the
call's deadline is nearer): a reader that is restarting, has exited or does not answer is left
out of the sums (and logged), never failing the call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from server.runtime import Runtime


@dataclass(frozen=True, slots=True)
class CacheCounts:
    """One process's (or a sum of processes') cache counters, since start or the last
    ClearCache; the retrieval ones for one collection."""

    embedding_hits: int = 0
    embedding_misses: int = 0
    retrieval_hits: int = 0
    retrieval_misses: int = 0
    retrieval_entries: int = 0
    processes: int = 1
    """How many processes these counts sum."""

    def fields(self) -> tuple[int, int, int, int, int]:
        """The five counters in declaration order (a reader sends them on its link)."""
        return (
            self.embedding_hits,
            self.embedding_misses,
            self.retrieval_hits,
            self.retrieval_misses,
            self.retrieval_entries,
        )


def count_local(runtime: Runtime, tenant: str, collection: str) -> CacheCounts:
    """This process's counters: query embeddings (all collections) and `collection`'s results."""
    embedding_hits = embedding_misses = 0
    if runtime.embedding_cache is not None:
        embedding = runtime.embedding_cache.stats()
        embedding_hits, embedding_misses = embedding.hits, embedding.misses
    if runtime.retrieval_cache is None:
        return CacheCounts(embedding_hits, embedding_misses)
    retrieval = runtime.retrieval_cache.stats(tenant, collection)
    return CacheCounts(
        embedding_hits,
        embedding_misses,
        retrieval.hits,
        retrieval.misses,
        retrieval.entries,
    )


def summed(counts: Iterable[CacheCounts]) -> CacheCounts:
    """The counters of several processes added up, `processes` saying how many."""
    parts = list(counts)
    return CacheCounts(
        sum(c.embedding_hits for c in parts),
        sum(c.embedding_misses for c in parts),
        sum(c.retrieval_hits for c in parts),
        sum(c.retrieval_misses for c in parts),
        sum(c.retrieval_entries for c in parts),
        sum(c.processes for c in parts),
    )
