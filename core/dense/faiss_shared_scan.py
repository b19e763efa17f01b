"""Flat searches of several queries share one pass over the stored vectors (one BLAS product).

FAISS scans every stored vector once per query (`exhaustive_inner_product_seq`, one query per
OpenMP thread) unless the query block holds at least `distance_compute_blas_threshold` floats
(queries x dimension; FAISS's default 128,000 is 334 queries of 384), when it multiplies blocks
of 1,024 stored vectors by all the queries with one sgemm and feeds the top-k heaps from that.
The per-query scan is memory-bound and gains nothing from company: over the python-faq index
(19,551 x 384) on one thread it costs ~2.2 ms per query whether 1 or 16 queries are searched in
one call, while the BLAS product costs 3.4 / 2.6 / 1.7 / 1.0 / 0.6 ms per query at 2 / 3 / 4 / 8
/ 16 queries (benchmarks/results/dense_combined_raw.md). So blocks from 4 queries of 384 (or
fewer, wider queries) take the BLAS path; a single query of up to 1,535 dimensions keeps the
scan. Both paths are exact; they may round a score differently in the last place.

The threshold is a process-wide FAISS variable: it is set, not toggled around calls, so
concurrent searches never race on it.
"""

from __future__ import annotations

import faiss

SHARED_SCAN_MIN_FLOATS = 4 * 384
"""Query blocks of at least this many floats are searched with one BLAS product."""


def share_scans() -> None:
    """Make FAISS flat searches of `SHARED_SCAN_MIN_FLOATS` floats or more use BLAS."""
    faiss.cvar.distance_compute_blas_threshold = SHARED_SCAN_MIN_FLOATS
