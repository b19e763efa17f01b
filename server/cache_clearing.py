"""ClearCache in every process of the server: what one process clears, and how readers are asked.

Each process caches for itself (query embeddings and retrieval results), so a ClearCache that
empties only the process serving it leaves the readers' caches full. The primary (which serves
every ClearCache: a reader forwards it there) clears its own caches and asks each reader to
clear its own over the reader's link (server/reader_supervisor.py), waiting at most
`READER_ANSWER_S` seconds (less when the call's deadline is nearer; server/reader_caches.py): a
reader that is restarting, has exited or does not answer is reported as such instead of holding
the call.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.runtime import Runtime


@dataclass(frozen=True, slots=True)
class CacheClear:
    """What one process cleared: `error` says why not when `cleared` is False."""

    process: int
    pid: int
    cleared: bool
    retrieval_entries: int = 0
    embedding_entries: int = 0
    error: str = ""


@dataclass(frozen=True, slots=True)
class ClearRequest:
    """One tenant's caches to clear: one collection, or all of them when `collection` is None."""

    tenant: str
    collection: str | None


def clear_local(runtime: Runtime, request: ClearRequest) -> tuple[int, int]:
    """Clear this process's caches: (retrieval entries, query-embedding entries) removed."""
    retrieval = runtime.retrieval_cache
    embedding = runtime.embedding_cache
    return (
        retrieval.clear(request.tenant, request.collection) if retrieval is not None else 0,
        embedding.clear() if embedding is not None else 0,
    )
