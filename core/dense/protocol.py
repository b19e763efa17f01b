"""`DenseIndex`: the contract every dense (vector) index implementation honours."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np


class DenseIndex(Protocol):
    """A vector index keyed by store row ids, scored by inner product.

    Vectors are L2-normalised by the caller, so scores are cosine similarities. Results are
    best first; slots beyond the available hits carry id -1 and score -inf.
    """

    @property
    def dimension(self) -> int:
        """Width d of every vector."""
        ...

    @property
    def ntotal(self) -> int:
        """Number of live (searchable) vectors."""
        ...

    @property
    def tombstone_count(self) -> int:
        """Removed vectors the index still holds (HNSW) until it is rebuilt; 0 for the others."""
        ...

    def add(self, row_ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add vectors. `row_ids`: int64 (n,), not already present; `vectors`: float32 (n, d)."""
        ...

    def remove(self, row_ids: np.ndarray) -> None:
        """Remove vectors by row id (int64 (n,)); unknown ids are ignored."""
        ...

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k for each query. `queries`: float32 (q, d).

        Returns (scores float32 (q, k), row ids int64 (q, k)).
        """
        ...

    def search_subset(
        self, queries: np.ndarray, k: int, allowed_row_ids: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k restricted to `allowed_row_ids` (int64 (m,)); shapes as in `search`."""
        ...

    def save(self, directory: Path, sequence: int) -> None:
        """Atomically persist the index under `directory` with the store `sequence` it reflects."""
        ...

    def memory_bytes(self) -> int:
        """Approximate resident size of the index in bytes."""
        ...
