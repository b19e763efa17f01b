"""`TorchExactIndex`: an exact `DenseIndex` on torch, for CUDA machines without GPU FAISS.

The corpus matrix stays resident on `device` (fp16 on CUDA, fp32 on CPU) with its row ids and a
live mask. Search is matmul + top-k tiled over the corpus to `memory_budget_bytes`; removed rows
(tombstones) and `search_subset` filters are applied on the device as a -inf score mask before
top-k. Queries may be NumPy float32 or a torch tensor already on the device (no host round trip).
With `fused` set (CUDA with Triton), batches of up to `FUSED_MAX_QUERIES` queries use
`fused_top_k` (one pass over the corpus, scores accumulated in float32) instead of the matmul
path. A search with no tombstones skips the mask. On CUDA a single-query `search` is replayed as
a CUDA graph (`graph_search`) once the same corpus view has been searched twice (ingestion, which
changes the view on every write, never pays for captures it cannot reuse).

Score tolerance against exact float32 search, for L2-normalised vectors: fp32 (CPU) |delta| <=
1e-5; fp16 (CUDA) |delta| <= 2e-3 (`FP16_SCORE_TOLERANCE`), so ids may swap between hits whose
scores lie that close. Thread-safe: one lock serialises every operation.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
import torch

from core.dense.exact import empty_results
from core.dense.fused_top_k import DEFAULT_CONFIG, fused_applies, fused_available, fused_top_k
from core.dense.graph_search import GraphKey, SingleQueryGraph
from core.dense.torch_file import SavedVectors, read_vectors_file, write_vectors_file
from core.dense.torch_topk import row_ids, tiled_top_k

log = logging.getLogger(__name__)

FP32_SCORE_TOLERANCE = 1e-5
FP16_SCORE_TOLERANCE = 2e-3
DEFAULT_MEMORY_BUDGET_BYTES = 1 << 30
_MIN_CAPACITY = 256
_COMPACT_AFTER_TOMBSTONES = 1024

FloatArray = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]
Results = tuple[FloatArray, IdArray]
Queries = npt.NDArray[np.float32] | torch.Tensor


class TorchExactIndex:
    """An exact dense index keyed by store row id, resident on a torch device."""

    def __init__(self, dimension: int, device: str, memory_budget_bytes: int) -> None:
        if dimension < 1:
            raise ValueError(f"dimension must be >= 1, got {dimension}")
        if memory_budget_bytes < 1:
            raise ValueError(f"memory_budget_bytes must be >= 1, got {memory_budget_bytes}")
        self._dimension = dimension
        self._device = torch.device(device)
        self._dtype = torch.float16 if self._device.type == "cuda" else torch.float32
        self._budget = memory_budget_bytes
        self._vectors = torch.empty((0, dimension), dtype=self._dtype, device=self._device)
        self._ids = torch.empty(0, dtype=torch.int64, device=self._device)
        self._live = torch.empty(0, dtype=torch.bool, device=self._device)
        self._size = 0  # slots used, live or tombstoned
        self._positions: dict[int, int] = {}  # live row id -> slot
        self._lock = threading.RLock()
        self.fused = False
        """Take the fused Triton kernel for small batches (CUDA with Triton only). Off by default:
        on an H100 it measured no faster than the matmul path (benchmarks/gpu) and compiles once
        per (k, batch) on first use."""
        self.fused_config = DEFAULT_CONFIG
        """The fused kernel's launch shape; settable (the GPU benchmark sweeps it)."""
        self.cuda_graphs = self._device.type == "cuda"
        """Replay single-query searches as CUDA graphs (CUDA only; turned off for good when a
        capture fails or disagrees with the eager search)."""
        self.graph_captures = 0
        self._graph: SingleQueryGraph | None = None
        self._graph_seen: GraphKey | None = None  # searched once: captured on the next search

    @classmethod
    def create(
        cls,
        dimension: int,
        device: str = "cpu",
        memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET_BYTES,
    ) -> TorchExactIndex:
        """A new empty index of `dimension`-wide vectors on `device` ("cpu", "cuda", "cuda:N")."""
        return cls(dimension, device, memory_budget_bytes)

    @classmethod
    def load(
        cls,
        directory: Path,
        device: str = "cpu",
        memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET_BYTES,
    ) -> tuple[TorchExactIndex, int] | None:
        """The index saved under `directory` and its store sequence; None when none was saved.

        Raises `CorruptIndexFile` when the file exists but is unreadable.
        """
        saved = read_vectors_file(directory)
        if saved is None:
            return None
        index = cls(saved.dimension, device, memory_budget_bytes)
        index.add(saved.row_ids, saved.vectors)
        return index, saved.sequence

    @property
    def dimension(self) -> int:
        """Width of every vector."""
        return self._dimension

    @property
    def device(self) -> str:
        """The torch device holding the corpus."""
        return str(self._device)

    @property
    def score_tolerance(self) -> float:
        """Largest |score - exact float32 score| for normalised vectors on this device."""
        return FP16_SCORE_TOLERANCE if self._dtype == torch.float16 else FP32_SCORE_TOLERANCE

    @property
    def ntotal(self) -> int:
        """Number of live vectors."""
        with self._lock:
            return len(self._positions)

    @property
    def tombstone_count(self) -> int:
        """Removed vectors still occupying slots (reclaimed on growth or compaction)."""
        with self._lock:
            return self._size - len(self._positions)

    def add(self, row_ids: IdArray, vectors: FloatArray) -> None:
        """Add vectors: `row_ids` int64 (n,), unique and not present; `vectors` float32 (n, d)."""
        ids = np.ascontiguousarray(row_ids, dtype=np.int64).reshape(-1)
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape != (ids.size, self._dimension):
            expected = f"({ids.size}, {self._dimension})"
            raise ValueError(f"vectors must have shape {expected}, got {matrix.shape}")
        if np.unique(ids).size != ids.size:
            raise ValueError("row_ids must be unique")
        if ids.size == 0:
            return
        with self._lock:
            present = [i for i in ids.tolist() if i in self._positions]
            if present:
                raise ValueError(f"row id {present[0]} is already in the index")
            self._reserve(self._size + ids.size)
            start, stop = self._size, self._size + ids.size
            self._vectors[start:stop] = torch.from_numpy(matrix).to(self._device, self._dtype)
            self._ids[start:stop] = torch.from_numpy(ids).to(self._device)
            self._live[start:stop] = True
            self._positions.update(zip(ids.tolist(), range(start, stop), strict=True))
            self._size = stop

    def remove(self, row_ids: IdArray) -> None:
        """Remove vectors by row id (int64 (n,)); ids not present are ignored."""
        ids = np.unique(np.asarray(row_ids, dtype=np.int64).reshape(-1))
        with self._lock:
            slots = [self._positions.pop(i) for i in ids.tolist() if i in self._positions]
            if not slots:
                return
            self._live[torch.tensor(slots, dtype=torch.int64, device=self._device)] = False
            dead = self._size - len(self._positions)
            if dead >= _COMPACT_AFTER_TOMBSTONES and 2 * dead > self._size:
                self._rebuild(self._vectors.shape[0])

    def search(self, queries: Queries, k: int) -> Results:
        """Exact top-k: (scores float32 (q, k), row ids int64 (q, k)); `queries` (q, d)."""
        matrix = self._query_tensor(queries, k)
        with self._lock:
            if not self._positions:
                return empty_results(matrix.shape[0], k)
            all_live = len(self._positions) == self._size
            include = None if all_live else self._live[: self._size]
            if matrix.shape[0] == 1 and self.cuda_graphs and not self.fused:
                replayed = self._graph_search(matrix, k, include)
                if replayed is not None:
                    return replayed
            return self._top_k(matrix, k, include)

    def search_subset(self, queries: Queries, k: int, allowed_row_ids: IdArray) -> Results:
        """Exact top-k among `allowed_row_ids` (int64 (m,)); shapes as in `search`."""
        matrix = self._query_tensor(queries, k)
        allowed = np.unique(np.asarray(allowed_row_ids, dtype=np.int64).reshape(-1))
        with self._lock:
            if allowed.size == 0 or not self._positions:
                return empty_results(matrix.shape[0], k)
            wanted = torch.from_numpy(allowed).to(self._device)
            include = self._live[: self._size] & torch.isin(self._ids[: self._size], wanted)
            return self._top_k(matrix, k, include)

    def save(self, directory: Path, sequence: int) -> None:
        """Atomically write the live vectors and `sequence` to `directory` (see `torch_file`)."""
        with self._lock:
            live = self._live[: self._size]
            ids = self._ids[: self._size][live].cpu().numpy()
            vectors = self._vectors[: self._size][live].float().cpu().numpy()
            write_vectors_file(directory, SavedVectors(self._dimension, sequence, ids, vectors))

    def memory_bytes(self) -> int:
        """Approximate resident size in bytes (device tensors plus the host id map)."""
        with self._lock:
            capacity = self._vectors.shape[0]
            per_slot = self._dimension * self._vectors.element_size() + 8 + 1
            return capacity * per_slot + 64 * len(self._positions)

    def _top_k(self, queries: torch.Tensor, k: int, include: torch.Tensor | None) -> Results:
        corpus = self._vectors[: self._size]
        if self.fused and fused_available(self._device) and fused_applies(queries.shape[0], k):
            scores, positions = fused_top_k(queries, corpus, include, k, self.fused_config)
        else:
            scores, positions = tiled_top_k(queries, corpus, include, k, self._budget)
        return _padded(scores, row_ids(scores, positions, self._ids), k)

    def _graph_search(
        self, query: torch.Tensor, k: int, include: torch.Tensor | None
    ) -> Results | None:
        """The replayed search for `query` (1, d); None to search eagerly (under the lock)."""
        mask_ptr = 0 if include is None else self._live.data_ptr()
        key = GraphKey(self._size, self._vectors.data_ptr(), self._ids.data_ptr(), mask_ptr, k)
        graph = self._graph
        if graph is None or graph.key != key:
            if self._graph_seen != key:
                self._graph_seen = key
                return None
            graph = self._capture(key, query, include)
            if graph is None:
                return None
        try:
            return _padded(*graph.run(query), k)
        except RuntimeError as exc:
            log.warning("CUDA graph dense search failed (%s); searching eagerly from now on", exc)
            self.cuda_graphs, self._graph = False, None
            return None

    def _capture(
        self, key: GraphKey, query: torch.Tensor, include: torch.Tensor | None
    ) -> SingleQueryGraph | None:
        """A graph for `key`, checked against the eager search of `query`; None (and graphs
        off) when capturing fails or the two disagree."""
        self._graph = None  # free the previous capture's memory pool first
        size = self._size
        try:
            graph = SingleQueryGraph(key, self._vectors[:size], self._ids[:size], include)
            replayed = _padded(*graph.run(query), key.k)
        except RuntimeError as exc:
            log.warning(
                "CUDA graph capture of the dense search failed (%s); searching eagerly", exc
            )
            self.cuda_graphs = False
            return None
        eager = self._top_k(query, key.k, include)
        if not _agree(replayed, eager, self.score_tolerance):
            log.warning(
                "the CUDA graph dense search disagreed with the eager one; searching eagerly"
            )
            self.cuda_graphs = False
            return None
        self._graph = graph
        self.graph_captures += 1
        return graph

    def _query_tensor(self, queries: Queries, k: int) -> torch.Tensor:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if isinstance(queries, torch.Tensor):
            tensor = queries.detach().to(device=self._device, dtype=self._dtype)
        else:
            matrix = np.ascontiguousarray(queries, dtype=np.float32)
            tensor = torch.from_numpy(matrix).to(device=self._device, dtype=self._dtype)
        if tensor.ndim != 2 or tensor.shape[1] != self._dimension:
            shape = tuple(tensor.shape)
            raise ValueError(f"queries must have shape (q, {self._dimension}), got {shape}")
        return tensor

    def _reserve(self, needed: int) -> None:
        capacity = self._vectors.shape[0]
        if needed > capacity:
            self._rebuild(max(needed, 2 * capacity, _MIN_CAPACITY))

    def _rebuild(self, capacity: int) -> None:
        """Reallocate to `capacity` slots, keeping only live rows (in slot order)."""
        live = self._live[: self._size]
        count = int(live.sum().item())
        capacity = max(capacity, count)
        device = self._device
        vectors = torch.empty((capacity, self._dimension), dtype=self._dtype, device=device)
        ids = torch.full((capacity,), -1, dtype=torch.int64, device=device)
        mask = torch.zeros(capacity, dtype=torch.bool, device=device)
        vectors[:count] = self._vectors[: self._size][live]
        ids[:count] = self._ids[: self._size][live]
        mask[:count] = True
        self._vectors, self._ids, self._live, self._size = vectors, ids, mask, count
        self._positions = {row_id: slot for slot, row_id in enumerate(ids[:count].tolist())}


def _padded(scores: torch.Tensor, ids: torch.Tensor, k: int) -> Results:
    """Device results (q, k') as host arrays (q, k), padded with -inf scores and -1 ids."""
    host_scores, host_ids = _to_host(scores, ids)
    out_scores, out_ids = empty_results(scores.shape[0], k)
    take = scores.shape[1]
    out_scores[:, :take] = host_scores
    out_ids[:, :take] = host_ids
    return out_scores, out_ids


def _agree(first: Results, second: Results, tolerance: float) -> bool:
    """Same scores rank by rank (within `tolerance`), and the same ids unless scores tie."""
    (scores_a, ids_a), (scores_b, ids_b) = first, second
    finite = np.isfinite(scores_b)
    if not np.array_equal(np.isfinite(scores_a), finite):
        return False
    if not np.allclose(scores_a[finite], scores_b[finite], atol=tolerance, rtol=0):
        return False
    ties = np.abs(np.diff(scores_b[finite])) <= tolerance if finite.sum() > 1 else np.array([])
    return bool(np.array_equal(ids_a, ids_b) or ties.any())


def _to_host(scores: torch.Tensor, ids: torch.Tensor) -> tuple[FloatArray, IdArray]:
    """Both result tensors as NumPy arrays with one device synchronisation (pinned buffers)."""
    if scores.device.type != "cuda":
        return scores.numpy(), ids.numpy()
    host_scores = torch.empty(scores.shape, dtype=scores.dtype, pin_memory=True)
    host_ids = torch.empty(ids.shape, dtype=ids.dtype, pin_memory=True)
    host_scores.copy_(scores, non_blocking=True)
    host_ids.copy_(ids, non_blocking=True)
    torch.cuda.current_stream(scores.device).synchronize()
    return host_scores.numpy(), host_ids.numpy()
