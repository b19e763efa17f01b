"""`FaissGpuIndex`: FAISS "flat" or "ivf_flat" searched on a GPU, with a CPU `FaissIndex` as truth.

The CPU index holds every vector and does removal, `search_subset` (FAISS GPU indexes take no
IDSelector), `save` and the IVF training. `search` runs on a device copy made with
`faiss.index_cpu_to_gpu` (GpuIndexFlatIP inside the IDMap2 wrapper, or GpuIndexIVFFlat): adds go
to both; removed ids stay in the copy as host-side tombstones, searched around by asking the GPU
for k + tombstones hits and dropping them. The copy is remade from the CPU index when tombstones
pile up, when a removed id is re-added, or when IVF training replaces the CPU structure.

Vectors are float32 on the device, so scores match the CPU index within `SCORE_TOLERANCE`.
Thread-safe: one lock serialises every operation. `copy_to_device` is injectable so the mirroring
logic is tested on CPU with `faiss.clone_index`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from core.dense.exact import empty_results, finalise
from core.dense.faiss_index import FaissIndex
from core.dense.spec import DenseIndexSpec

FloatArray = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]
Results = tuple[FloatArray, IdArray]
DeviceCopier = Callable[[faiss.Index], faiss.Index]

GPU_MAX_K = 2048
"""Largest k a FAISS GPU search accepts; larger requests are answered by the CPU index."""
MAX_DEVICE_TOMBSTONES = 1024
"""Removed ids tolerated in the device copy before it is remade from the CPU index."""
SCORE_TOLERANCE = 1e-4
"""Largest |score - exact float32 score| expected from the GPU copy (float32 GEMM on device)."""


def gpu_copier(gpu: int) -> DeviceCopier:
    """A copier onto CUDA device `gpu` (one `StandardGpuResources`, kept alive by the closure)."""
    untyped: Any = faiss  # StandardGpuResources / index_cpu_to_gpu exist only in GPU builds
    resources = untyped.StandardGpuResources()

    def copy(index: faiss.Index) -> faiss.Index:
        device_index: faiss.Index = untyped.index_cpu_to_gpu(resources, gpu, index)
        return device_index

    return copy


class FaissGpuIndex:
    """A `DenseIndex` whose searches run on a FAISS GPU copy of a CPU `FaissIndex`."""

    def __init__(self, cpu: FaissIndex, copy_to_device: DeviceCopier, device: str) -> None:
        if cpu.structure == "hnsw":  # kind "hnsw", or an "auto" index grown into a graph
            raise ValueError('FAISS has no GPU HNSW; use kind "flat" or "ivf_flat" on a GPU')
        self._cpu = cpu
        self._copy_to_device = copy_to_device
        self._device = device
        self._mirror: faiss.Index | None = None
        self._mirror_trained = False
        self._dead: set[int] = set()
        self._lock = threading.RLock()

    @classmethod
    def create(cls, spec: DenseIndexSpec, dimension: int, gpu: int = 0) -> FaissGpuIndex:
        """A new empty index searched on CUDA device `gpu` ("auto" stays exact flat: a GPU scans
        faster than a CPU graph walks)."""
        cpu = FaissIndex.create(spec, dimension, exact_only=True)
        return cls(cpu, gpu_copier(gpu), f"cuda:{gpu}")

    @classmethod
    def load(cls, directory: Path, gpu: int = 0) -> tuple[FaissGpuIndex, int] | None:
        """The `FaissIndex` saved under `directory`, copied to CUDA device `gpu`; None if absent
        or a graph (an "auto" index grown on a CPU machine: rebuilt exact from the store)."""
        loaded = FaissIndex.load(directory, exact_only=True)
        if loaded is None or loaded[0].structure == "hnsw":
            return None
        return cls(loaded[0], gpu_copier(gpu), f"cuda:{gpu}"), loaded[1]

    @property
    def spec(self) -> DenseIndexSpec:
        """The spec of the CPU index."""
        return self._cpu.spec

    @property
    def device(self) -> str:
        """Where searches run."""
        return self._device

    @property
    def dimension(self) -> int:
        """Width of every vector."""
        return self._cpu.dimension

    @property
    def ntotal(self) -> int:
        """Number of live vectors."""
        return self._cpu.ntotal

    @property
    def tombstone_count(self) -> int:
        """Removed vectors still held by the CPU index (always 0: flat and IVF delete for real)."""
        return self._cpu.tombstone_count

    @property
    def device_tombstones(self) -> int:
        """Removed ids still present in the device copy."""
        with self._lock:
            return len(self._dead)

    def add(self, row_ids: IdArray, vectors: FloatArray) -> None:
        """Add vectors: `row_ids` int64 (n,), unique; `vectors` float32 (n, d)."""
        with self._lock:
            self._cpu.add(row_ids, vectors)
            ids = np.ascontiguousarray(row_ids, dtype=np.int64).reshape(-1)
            if self._mirror is None or ids.size == 0:
                return
            if self._cpu.is_trained != self._mirror_trained or self._dead.intersection(
                ids.tolist()
            ):
                self._mirror = None  # IVF training replaced the structure, or an id came back
                return
            self._mirror.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids)

    def remove(self, row_ids: IdArray) -> None:
        """Remove vectors by row id (int64 (n,)); ids not present are ignored."""
        ids = np.unique(np.asarray(row_ids, dtype=np.int64).reshape(-1))
        with self._lock:
            before = self._cpu.ntotal
            self._cpu.remove(ids)
            if self._mirror is not None and self._cpu.ntotal < before:
                self._dead.update(ids.tolist())

    def search(self, queries: FloatArray, k: int) -> Results:
        """Top-k on the device (exact for flat): (scores float32 (q, k), ids int64 (q, k))."""
        with self._lock:
            if k < 1 or self._cpu.ntotal == 0 or k > GPU_MAX_K:
                return self._cpu.search(queries, k)  # validation, empty index, or k too large
            matrix = _checked_queries(queries, self._cpu.dimension)
            mirror = self._current_mirror(k)
            fetch = min(k + len(self._dead), int(mirror.ntotal))
            scores, ids = finalise(*mirror.search(matrix, fetch))
            return _drop_dead(scores, ids, self._dead, k)

    def search_subset(self, queries: FloatArray, k: int, allowed_row_ids: IdArray) -> Results:
        """Exact top-k among `allowed_row_ids` (int64 (m,)), answered by the CPU index."""
        with self._lock:
            return self._cpu.search_subset(queries, k, allowed_row_ids)

    def save(self, directory: Path, sequence: int) -> None:
        """Atomically write the CPU index (the same file as `FaissIndex.save`)."""
        with self._lock:
            self._cpu.save(directory, sequence)

    def memory_bytes(self) -> int:
        """Approximate resident size: the CPU index plus the float32 device copy."""
        with self._lock:
            device_rows = 0 if self._mirror is None else int(self._mirror.ntotal)
            return self._cpu.memory_bytes() + device_rows * (self._cpu.dimension * 4 + 8)

    def _current_mirror(self, k: int) -> faiss.Index:
        dead = len(self._dead)
        if self._mirror is None or dead > MAX_DEVICE_TOMBSTONES or k + dead > GPU_MAX_K:
            self._mirror = self._copy_to_device(self._cpu.faiss_index)
            self._mirror_trained = self._cpu.is_trained
            self._dead = set()
        return self._mirror


def _checked_queries(queries: FloatArray, dimension: int) -> FloatArray:
    matrix = np.ascontiguousarray(queries, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] != dimension:
        raise ValueError(f"queries must have shape (q, {dimension}), got {matrix.shape}")
    return matrix


def _drop_dead(scores: FloatArray, ids: IdArray, dead: set[int], k: int) -> Results:
    """The first k hits of each row that are not in `dead`, padded with -inf / -1."""
    out_scores, out_ids = empty_results(ids.shape[0], k)
    dead_ids = np.fromiter(dead, dtype=np.int64, count=len(dead))
    keep = (ids >= 0) & ~np.isin(ids, dead_ids)
    for row in range(ids.shape[0]):
        live = np.flatnonzero(keep[row])[:k]
        out_scores[row, : live.size] = scores[row, live]
        out_ids[row, : live.size] = ids[row, live]
    return out_scores, out_ids
