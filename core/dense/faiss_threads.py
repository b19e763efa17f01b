"""OpenMP threads of one FAISS call: a search of up to 16 queries runs on its calling thread.

FAISS parallelises a search with OpenMP, by default over every core. For a single query that
buys nothing (a flat scan of 20k x 384 floats takes ~3 ms on one core) but costs a thread team
per calling thread: each server worker thread that searches gets its own team, whose threads
spin between searches and fight the model and the other workers for the cores. On the 2-core
machine at load 9-14, a query over 19.5k x 384 took 33-87 ms with the default team against
2.6-9.7 ms alone, same rankings (benchmarks/results/retrieve_hot_path-padded.md). The OpenMP
thread count is per calling thread, so setting it here leaves bulk work (index builds, training,
large batch searches) elsewhere untouched.

Combined searches (`combined_search`, 2-16 queries) run alone too. A team of two never saved
CPU over python-faq: in an exploratory run a call of 2-8 queries cost 1.5-3x the CPU per query
with two threads (per-query scan and BLAS path alike), in the recorded one the BLAS path cost the
same with one or two (0.93 vs 0.91 ms per query at 8; benchmarks/results/dense_combined_raw.md);
one thread keeps every search worker from dragging a spinning team, as for a single query.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import faiss

ALONE_MAX_QUERIES = 16
"""Searches of at most this many queries run without an OpenMP team (the combining cap)."""


@contextmanager
def search_threads(queries: int) -> Iterator[None]:
    """Within the block, FAISS calls made by this thread for a search of `queries` queries use
    one OpenMP thread when `queries <= ALONE_MAX_QUERIES`; the thread's setting is restored."""
    if queries > ALONE_MAX_QUERIES:
        yield
        return
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)
