"""`FaissIndex`: the FAISS implementation of `DenseIndex` ("flat", "hnsw", "ivf_flat", "auto").

- flat: IDMap2(IndexFlatIP); exact.
- hnsw: IDMap2(IndexHNSWFlat, inner product). HNSW cannot delete, so removed row ids become
  tombstones: searches exclude them with an IDSelector inside the graph walk (so k live results
  still come back) and drop any that slip through. Rebuild when `tombstone_count` grows large.
  A search's candidate list is `spec.ef_search_for(k)`: never narrower than a multiple of k.
- ivf_flat: IndexIVFFlat (inner product, hash-table direct map).
- auto: what "hnsw" is, once it holds more than `auto_graph_threshold` vectors.

The staged kinds ("ivf_flat", "auto") keep their vectors in an exact IDMap2(IndexFlatIP) until
enough exist (`spec.leaves_flat_stage`: IVF training is possible, or the auto threshold is
passed); the add that crosses it builds the final structure (`faiss_build.grown_index`) from
everything staged plus the new batch. Removals in the stage are real deletes.

Thread-safe: one lock serialises every operation. A search of up to 16 queries (a single one, or
a combined search, `combined_search`) runs on the calling thread alone (`faiss_threads`); flat
searches of 4 or more queries share one BLAS pass over the vectors (`faiss_shared_scan`).
"""

from __future__ import annotations

import threading
from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt

from core.dense import faiss_build as build
from core.dense.exact import empty_results, exact_top_k, finalise
from core.dense.faiss_build import FloatArray, IdArray
from core.dense.faiss_file import SavedIndex, read_index_file, write_index_file
from core.dense.faiss_shared_scan import share_scans
from core.dense.faiss_threads import search_threads
from core.dense.spec import DenseIndexSpec, DenseKind, leaves_flat_stage

__all__ = ["DenseIndexSpec", "FaissIndex"]

Results = tuple[FloatArray, IdArray]


class FaissIndex:
    """A dense index over one collection's chunk embeddings, keyed by store row id."""

    def __init__(
        self,
        spec: DenseIndexSpec,
        dimension: int,
        index: faiss.Index,
        tombstones: IdArray | None = None,
        exact_only: bool = False,
    ) -> None:
        """`exact_only`: an "auto" index never leaves its flat stage (the CPU truth of a GPU
        copy, which has no graph); other kinds ignore it."""
        self._spec = spec
        self._dimension = dimension
        self._index = index
        self._graph = build.is_graph(index)
        self._exact_only = exact_only and spec.dense_kind is DenseKind.AUTO
        self._tombstones: set[int] = set() if tombstones is None else set(tombstones.tolist())
        # (IDSelectorNot, the IDSelectorBatch it wraps, the tombstones as int64): built lazily;
        # both selectors stay referenced so FAISS never sees a freed one.
        self._tombstone_cache: tuple[faiss.IDSelector, faiss.IDSelector, IdArray] | None = None
        self._lock = threading.RLock()
        build.configure(index, spec)
        share_scans()

    @classmethod
    def create(cls, spec: DenseIndexSpec, dimension: int, exact_only: bool = False) -> FaissIndex:
        """A new empty index of `dimension`-wide vectors (`exact_only`: see `__init__`)."""
        if dimension < 1:
            raise ValueError(f"dimension must be >= 1, got {dimension}")
        return cls(spec, dimension, build.new_index(spec, dimension), exact_only=exact_only)

    @classmethod
    def load(cls, directory: Path, exact_only: bool = False) -> tuple[FaissIndex, int] | None:
        """The index saved under `directory` and its store sequence; None when none was saved.

        Raises `CorruptIndexFile` when the file exists but is unreadable.
        """
        saved = read_index_file(directory)
        if saved is None:
            return None
        index = cls(saved.spec, saved.dimension, saved.index, saved.tombstones, exact_only)
        return index, saved.sequence

    @property
    def spec(self) -> DenseIndexSpec:
        """The spec the index was built with."""
        return self._spec

    @property
    def dimension(self) -> int:
        """Width of every vector."""
        return self._dimension

    @property
    def ntotal(self) -> int:
        """Number of live vectors (tombstones excluded)."""
        with self._lock:
            return int(self._index.ntotal) - len(self._tombstones)

    @property
    def tombstone_count(self) -> int:
        """Removed vectors still occupying an HNSW graph (always 0 for other structures)."""
        return len(self._tombstones)

    @property
    def structure(self) -> str:
        """What serves searches now: "flat", "hnsw" or "ivf_flat" (an "auto" index is "flat"
        until it crosses its threshold, "hnsw" after)."""
        with self._lock:
            if self._graph:
                return "hnsw"
            return "ivf_flat" if self._is_ivf() else "flat"

    @property
    def faiss_index(self) -> faiss.Index:
        """The FAISS structure itself (IDMap2 or IVF-Flat), for copying to a GPU; do not mutate."""
        return self._index

    @property
    def is_trained(self) -> bool:
        """False only while a staged kind ("ivf_flat", "auto") holds its vectors in the flat
        stage (an `exact_only` "auto" index, always)."""
        return not self._spec.staged or self._is_ivf() or self._graph

    def add(self, row_ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Add vectors: `row_ids` int64 (n,), unique and never added before; float32 (n, d)."""
        ids, matrix = self._checked_batch(row_ids, vectors)
        if ids.size == 0:
            return
        with self._lock:
            if self._tombstones.intersection(ids.tolist()):
                raise ValueError("row ids are never reused: a removed row id cannot be re-added")
            if not self.is_trained and not self._exact_only and self._grow_if_due(ids, matrix):
                return
            self._index.add_with_ids(matrix, ids)

    def remove(self, row_ids: npt.NDArray[np.int64]) -> None:
        """Remove vectors by row id (int64 (n,)); ids not present are ignored."""
        ids = np.unique(np.asarray(row_ids, dtype=np.int64).reshape(-1))
        if ids.size == 0:
            return
        with self._lock:
            if isinstance(self._index, faiss.IndexIVFFlat):  # hash-table direct map: Array only
                self._index.remove_ids(faiss.IDSelectorArray(ids))
                return
            if not self._graph:
                self._index.remove_ids(faiss.IDSelectorBatch(ids))
                return
            fresh = [i for i in ids.tolist() if i not in self._tombstones]
            present = [i for i in fresh if build.contains(self._index, i)]
            if present:
                self._tombstones.update(present)
                self._tombstone_cache = None

    def search(self, queries: npt.NDArray[np.float32], k: int) -> Results:
        """Approximate (exact for flat) top-k: (scores float32 (q, k), row ids int64 (q, k))."""
        matrix = self._checked_queries(queries, k)
        with self._lock, search_threads(matrix.shape[0]):
            if self.ntotal == 0:
                return empty_results(matrix.shape[0], k)
            if self._graph:
                return self._search_graph(matrix, k)
            return finalise(*self._index.search(matrix, k))

    def search_subset(
        self, queries: npt.NDArray[np.float32], k: int, allowed_row_ids: npt.NDArray[np.int64]
    ) -> Results:
        """Exact top-k among `allowed_row_ids` (int64 (m,)); shapes as in `search`."""
        matrix = self._checked_queries(queries, k)
        allowed = np.unique(np.asarray(allowed_row_ids, dtype=np.int64).reshape(-1))
        with self._lock, search_threads(matrix.shape[0]):
            if allowed.size == 0 or self.ntotal == 0:
                return empty_results(matrix.shape[0], k)
            if self._graph:
                return self._exact_hnsw_subset(matrix, k, allowed)
            selector = faiss.IDSelectorBatch(allowed)
            if isinstance(self._index, faiss.IndexIVFFlat):  # probing every list is exhaustive
                params = build.ivf_parameters(selector, self._index.nlist)
            else:
                params = build.search_parameters(selector)
            return finalise(*self._index.search(matrix, k, params=params))

    def save(self, directory: Path, sequence: int) -> None:
        """Atomically write the index and `sequence` to `directory` (see `faiss_file`)."""
        with self._lock:
            tombstones = np.array(sorted(self._tombstones), dtype=np.int64)
            saved = SavedIndex(self._spec, self._dimension, sequence, tombstones, self._index)
            write_index_file(directory, saved)

    def memory_bytes(self) -> int:
        """Approximate resident size in bytes."""
        with self._lock:
            return build.estimate_bytes(self._index, self._spec) + 64 * len(self._tombstones)

    def _is_ivf(self) -> bool:
        return isinstance(self._index, faiss.IndexIVFFlat)

    def _grow_if_due(self, ids: IdArray, matrix: FloatArray) -> bool:
        """Move the flat stage and the batch into the final structure when the batch takes the
        stage past its threshold; whether it did (the batch is then added)."""
        if not leaves_flat_stage(self._spec, int(self._index.ntotal) + ids.size):
            return False
        staged_ids, staged_vectors = build.id_map_contents(self._index)
        all_ids = np.concatenate([staged_ids, ids])
        all_vectors = np.concatenate([staged_vectors, matrix])
        self._index = build.grown_index(self._spec, all_ids, all_vectors)
        self._graph = build.is_graph(self._index)
        return True

    def _search_graph(self, matrix: FloatArray, k: int) -> Results:
        ef_search = self._spec.ef_search_for(k)
        if not self._tombstones:
            params = build.hnsw_parameters(None, ef_search)
            return finalise(*self._index.search(matrix, k, params=params))
        if self._tombstone_cache is None:
            dead = np.array(sorted(self._tombstones), dtype=np.int64)
            batch = faiss.IDSelectorBatch(dead)
            self._tombstone_cache = (faiss.IDSelectorNot(batch), batch, dead)
        selector, _, dead = self._tombstone_cache
        params = build.hnsw_parameters(selector, ef_search)
        scores, ids = finalise(*self._index.search(matrix, k, params=params))
        dead_hits = np.isin(ids, dead)  # belt and braces: the selector already excludes them
        ids[dead_hits] = -1
        scores[dead_hits] = -np.inf
        return _compact(scores, ids)

    def _exact_hnsw_subset(self, matrix: FloatArray, k: int, allowed: IdArray) -> Results:
        internal_ids = build.id_map_ids(self._index)
        live = np.isin(internal_ids, allowed)
        if self._tombstones:
            live &= ~np.isin(internal_ids, np.array(sorted(self._tombstones), dtype=np.int64))
        positions = np.flatnonzero(live).astype(np.int64)
        storage = build.hnsw_graph(self._index).storage
        vectors = np.asarray(storage.reconstruct_batch(positions), dtype=np.float32)
        return exact_top_k(matrix, vectors.reshape(-1, self._dimension), internal_ids[live], k)

    def _checked_batch(
        self, row_ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]
    ) -> tuple[IdArray, FloatArray]:
        ids = np.ascontiguousarray(row_ids, dtype=np.int64).reshape(-1)
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape != (ids.size, self._dimension):
            expected = f"({ids.size}, {self._dimension})"
            raise ValueError(f"vectors must have shape {expected}, got {matrix.shape}")
        if np.unique(ids).size != ids.size:
            raise ValueError("row_ids must be unique")
        return ids, matrix

    def _checked_queries(self, queries: npt.NDArray[np.float32], k: int) -> FloatArray:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        matrix = np.ascontiguousarray(queries, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] != self._dimension:
            raise ValueError(f"queries must have shape (q, {self._dimension}), got {matrix.shape}")
        return matrix


def _compact(scores: FloatArray, ids: IdArray) -> Results:
    """Move the valid hits of each row to the front, keeping their order."""
    order = np.argsort(ids < 0, axis=1, kind="stable")
    return np.take_along_axis(scores, order, axis=1), np.take_along_axis(ids, order, axis=1)
