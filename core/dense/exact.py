"""Exact inner-product top-k with NumPy: the reference the approximate indexes are held to."""

from __future__ import annotations

import numpy as np


def empty_results(queries: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(q, k) results with no hits: scores -inf, ids -1."""
    return (
        np.full((queries, k), -np.inf, dtype=np.float32),
        np.full((queries, k), -1, dtype=np.int64),
    )


def exact_top_k(
    queries: np.ndarray, vectors: np.ndarray, row_ids: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k by inner product of `queries` (float32 (q, d)) over `vectors` (float32 (n, d)).

    `row_ids` (int64 (n,)) label the vectors. Returns (scores float32 (q, k), ids int64 (q, k)),
    best first, padded with -inf / -1; ties are broken by ascending row id.
    """
    scores, ids = empty_results(queries.shape[0], k)
    if vectors.shape[0] == 0 or queries.shape[0] == 0:
        return scores, ids
    similarity = queries.astype(np.float32) @ vectors.astype(np.float32).T
    take = min(k, vectors.shape[0])
    if take < vectors.shape[0]:
        candidates = np.argpartition(-similarity, take - 1, axis=1)[:, :take]
    else:
        candidates = np.broadcast_to(np.arange(take), (similarity.shape[0], take))
    for row, columns in enumerate(candidates):
        values = similarity[row, columns]
        order = columns[np.lexsort((row_ids[columns], -values))]
        scores[row, :take] = similarity[row, order]
        ids[row, :take] = row_ids[order]
    return scores, ids


def finalise(scores: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Normalise raw FAISS results: float32 / int64, and score -inf wherever id is -1."""
    out_scores = np.array(scores, dtype=np.float32)
    out_ids = np.array(ids, dtype=np.int64)
    out_scores[out_ids < 0] = -np.inf
    return out_scores, out_ids
