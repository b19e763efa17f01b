"""`MilvusDenseIndex`: the `DenseIndex` protocol over the `vector` field of a chunk collection.

The vectors are written with their chunk entities by `MilvusStore` (one entity per chunk), and
Milvus keeps its index current itself: `add` and `remove` therefore have nothing to mirror, and
`save` nothing to write. Search runs in Milvus (FLAT, HNSW or GPU_CAGRA, inner product);
`search_subset` (the pipeline's exact search among a filter's admitted chunks) reads those
chunks' vectors and ranks them exactly here, so a large admitted set never becomes a huge
expression.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from core.milvus.options import MilvusOptions
from core.milvus.schema import dense_index_params, dense_index_type, dense_search_params
from core.milvus.store import MilvusStore

MAX_TOP_K = 16_384
"""Milvus' largest `limit` per search."""


class MilvusDenseIndex:
    """Dense search of one Milvus-backed collection."""

    def __init__(self, store: MilvusStore, options: MilvusOptions, dimension: int) -> None:
        self._store = store
        self._client: Any = store.client
        self._options = options
        self._dimension = dimension
        self._lock = threading.Lock()
        self._kind = self._read_kind()

    @property
    def dimension(self) -> int:
        """Width d of every vector."""
        return self._dimension

    @property
    def ntotal(self) -> int:
        """Live vectors (= live chunks)."""
        return self._store.counts()[1]

    @property
    def tombstone_count(self) -> int:
        """Milvus compacts deleted entities itself: 0."""
        return 0

    @property
    def kind(self) -> str:
        """The Milvus index type serving searches ("FLAT", "HNSW", "GPU_CAGRA")."""
        with self._lock:
            return self._kind

    def add(self, row_ids: np.ndarray, vectors: np.ndarray) -> None:
        """Nothing to do: `MilvusStore.upsert_document` wrote these vectors with their chunks."""

    def remove(self, row_ids: np.ndarray) -> None:
        """Nothing to do: the store's delete removed the chunk entities and their vectors."""

    def save(self, directory: Path, sequence: int) -> None:
        """Nothing to do: Milvus persists its own index."""

    def memory_bytes(self) -> int:
        """0: the index lives in the Milvus query nodes, not in this process."""
        return 0

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores float32 (q, k), row ids int64 (q, k)); -inf / -1 pad missing slots."""
        matrix = np.ascontiguousarray(queries, dtype=np.float32)
        scores = np.full((len(matrix), k), -np.inf, dtype=np.float32)
        ids = np.full((len(matrix), k), -1, dtype=np.int64)
        if k < 1 or not len(matrix):
            return scores, ids
        results = self._client.search(
            self._store.chunks,
            data=matrix.tolist(),
            anns_field="vector",
            limit=min(k, MAX_TOP_K),
            search_params=dense_search_params(self._options, self.kind),
            output_fields=["row_id"],
        )
        for row, hits in enumerate(results):
            for slot, hit in enumerate(hits):
                ids[row, slot] = int(hit["row_id"])
                scores[row, slot] = float(hit["distance"])
        return scores, ids

    def search_subset(
        self, queries: np.ndarray, k: int, allowed_row_ids: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k among `allowed_row_ids` (their vectors read from Milvus)."""
        matrix = np.ascontiguousarray(queries, dtype=np.float32)
        scores = np.full((len(matrix), k), -np.inf, dtype=np.float32)
        ids = np.full((len(matrix), k), -1, dtype=np.int64)
        row_ids, vectors = self._store.get_vectors([int(i) for i in allowed_row_ids])
        if k < 1 or not len(row_ids):
            return scores, ids
        similarities = matrix @ vectors.T
        take = min(k, len(row_ids))
        for row, values in enumerate(similarities):
            order = np.lexsort((row_ids, -values))[:take]  # best first, ties by row id
            scores[row, :take] = values[order]
            ids[row, :take] = row_ids[order]
        return scores, ids

    def upgrade_if_due(self, chunks: int) -> bool:
        """Rebuild the index as HNSW once AUTO's threshold is passed; whether it did."""
        wanted = dense_index_type(self._options, chunks)
        with self._lock:
            if wanted == self._kind:
                return False
            collection = self._store.chunks
            self._client.release_collection(collection)
            self._client.drop_index(collection, "vector")
            dense_only = dense_index_params(self._client, self._options, chunks)
            self._client.create_index(collection, dense_only)
            self._client.load_collection(collection)
            self._kind = wanted
            return True

    def _read_kind(self) -> str:
        described = self._client.describe_index(self._store.chunks, "vector")
        return str(described.get("index_type", "FLAT")).upper()
