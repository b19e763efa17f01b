"""The one place that decides which dense engine serves a collection, and builds or loads it.

Order of preference, decided once per collection from the spec, the device and what faiss reports:
1. FAISS GPU (`faiss_gpu_index`) on a CUDA device when the installed faiss is a GPU build that sees
   GPUs: "flat" and "ivf_flat" only.
2. The exact torch engine (`torch_exact`) on a CUDA device when faiss has no GPU support (the
   reference H100: torch + CUDA 13, no faiss GPU build). It serves "flat" and "ivf_flat": exact
   search returns what IVF approximates, and on a GPU it is the faster of the two.
3. FAISS CPU (`faiss_index`): "flat", "hnsw", "ivf_flat" and "auto"; the fallback and the
reference. "hnsw" always stays on FAISS CPU (there is no GPU HNSW). "auto" (flat, then a graph
past its threshold) is served like "flat" on a CUDA device: exact, its graph is a CPU shortcut.
Without faiss installed at all, every kind is served by the torch engine on the given device.

An engine's module is imported only when a collection is served by that engine: the torch
engine's imports torch, which a process serving FAISS CPU indexes (a reader on a CPU host) never
loads.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from core.dense.protocol import DenseIndex
from core.dense.spec import DenseIndexSpec, DenseKind

logger = logging.getLogger(__name__)


class DenseEngineName(StrEnum):
    """Short names of the engines, as logged and reported."""

    FAISS_FLAT = "faiss-flat"
    FAISS_AUTO = "faiss-auto"
    """FAISS CPU, kind "auto": exact flat, then HNSW past the spec's `auto_graph_threshold`."""
    FAISS_HNSW = "faiss-hnsw"
    FAISS_IVF_FLAT = "faiss-ivf_flat"
    FAISS_GPU_FLAT = "faiss-gpu-flat"
    FAISS_GPU_IVF_FLAT = "faiss-gpu-ivf_flat"
    TORCH_EXACT = "torch-exact"
    MILVUS = "milvus"
    """The collection's vectors live in Milvus (`core.milvus.dense`), which picks the index."""


_FAISS_CPU = {
    DenseKind.FLAT: DenseEngineName.FAISS_FLAT,
    DenseKind.HNSW: DenseEngineName.FAISS_HNSW,
    DenseKind.IVF_FLAT: DenseEngineName.FAISS_IVF_FLAT,
    DenseKind.AUTO: DenseEngineName.FAISS_AUTO,
}
_FAISS_GPU = {
    DenseKind.FLAT: DenseEngineName.FAISS_GPU_FLAT,
    DenseKind.AUTO: DenseEngineName.FAISS_GPU_FLAT,
    DenseKind.IVF_FLAT: DenseEngineName.FAISS_GPU_IVF_FLAT,
}


@dataclass(frozen=True, slots=True)
class FaissSupport:
    """What the installed faiss offers: importable at all, and GPUs visible to a GPU build."""

    installed: bool
    gpus: int


@dataclass(frozen=True, slots=True)
class EngineChoice:
    """The engine for a collection, the device it runs on and a readable reason for the log."""

    name: DenseEngineName
    device: str
    reason: str


@dataclass(frozen=True, slots=True)
class DenseEngine:
    """A built dense index with the engine name and device it was chosen for.

    `spec`: the spec the index answers to: a loaded FAISS index's saved spec (compare it with the
    wanted one to detect changed settings), else the requested spec (the torch engine is exact,
    so any spec is satisfied).
    """

    index: DenseIndex
    name: DenseEngineName
    device: str
    reason: str
    spec: DenseIndexSpec


@functools.cache
def probe_faiss() -> FaissSupport:
    """Whether faiss imports and how many GPUs it reports (0 for CPU-only builds); cached."""
    try:
        import faiss
    except ImportError:
        return FaissSupport(installed=False, gpus=0)
    if not hasattr(faiss, "StandardGpuResources"):
        return FaissSupport(installed=True, gpus=0)
    return FaissSupport(installed=True, gpus=int(faiss.get_num_gpus()))


def choose_engine(spec: DenseIndexSpec, device: str, faiss: FaissSupport) -> EngineChoice:
    """The engine for `spec` on torch `device` ("cpu", "cuda", "cuda:N"), given `faiss`."""
    kind = spec.dense_kind
    on_cuda = device.startswith("cuda")
    if not faiss.installed:
        return EngineChoice(
            DenseEngineName.TORCH_EXACT, device, f"faiss is not installed: exact search on {device}"
        )
    if kind is DenseKind.HNSW and on_cuda:
        reason = "kind hnsw: FAISS has no GPU HNSW, so it stays on CPU"
        return EngineChoice(DenseEngineName.FAISS_HNSW, "cpu", reason)
    if on_cuda and _gpu_number(device) < faiss.gpus:
        reason = f"faiss reports {faiss.gpus} GPU(s): {kind.value} copied to {device}"
        return EngineChoice(_FAISS_GPU[kind], device, reason)
    if on_cuda:
        reason = f"faiss has no GPU support for {device}: exact fp16 matmul + top-k on torch" + (
            " (exact, so at least IVF's recall)" if kind is DenseKind.IVF_FLAT else ""
        )
        if kind is DenseKind.AUTO:
            reason += " (auto: exact on a GPU, no graph)"
        return EngineChoice(DenseEngineName.TORCH_EXACT, device, reason)
    reason = f"kind {kind.value} on CPU FAISS"
    if kind is DenseKind.AUTO:
        reason += f" (exact flat up to {spec.auto_graph_threshold} vectors, then HNSW)"
    return EngineChoice(_FAISS_CPU[kind], "cpu", reason)


def create_dense_engine(
    spec: DenseIndexSpec,
    dimension: int,
    device: str,
    *,
    memory_budget_bytes: int | None = None,
    faiss: FaissSupport | None = None,
) -> DenseEngine:
    """A new empty engine of `dimension`-wide vectors for `spec` on `device` (choice logged).

    `memory_budget_bytes` bounds the torch engine's score tiles (None: its default); `faiss`
    overrides the probe.
    """
    choice = choose_engine(spec, device, probe_faiss() if faiss is None else faiss)
    logger.info("dense engine %s on %s: %s", choice.name, choice.device, choice.reason)
    return _engine(_new_index(choice, spec, dimension, memory_budget_bytes), choice, spec)


def load_dense_engine(
    directory: Path,
    spec: DenseIndexSpec,
    dimension: int,
    device: str,
    *,
    memory_budget_bytes: int | None = None,
    faiss: FaissSupport | None = None,
) -> tuple[DenseEngine, int] | None:
    """The engine saved under `directory` in the chosen engine's format, and its store sequence.

    None when no file of that format exists (FAISS engines read `dense.gwfaiss`, the torch engine
    `dense.gwtorch`) or its dimension differs: the caller rebuilds from the store. Raises
    `CorruptIndexFile` when the file exists but is unreadable.
    """
    choice = choose_engine(spec, device, probe_faiss() if faiss is None else faiss)
    loaded = _load_index(choice, directory, memory_budget_bytes)
    if loaded is None:
        logger.info("no %s index saved in %s", choice.name, directory)
        return None
    index, sequence = loaded
    if index.dimension != dimension:
        logger.warning(
            "dense index in %s has dimension %d, expected %d", directory, index.dimension, dimension
        )
        return None
    logger.info("dense engine %s on %s: %s (loaded)", choice.name, choice.device, choice.reason)
    saved_spec = getattr(index, "spec", spec)
    assert isinstance(saved_spec, DenseIndexSpec)
    return _engine(index, choice, saved_spec), sequence


def _engine(index: DenseIndex, choice: EngineChoice, spec: DenseIndexSpec) -> DenseEngine:
    return DenseEngine(index, choice.name, choice.device, choice.reason, spec)


def _gpu_number(device: str) -> int:
    """N of "cuda:N" (0 for "cuda")."""
    _, _, number = device.partition(":")
    return int(number) if number else 0


def _new_index(
    choice: EngineChoice, spec: DenseIndexSpec, dimension: int, budget: int | None
) -> DenseIndex:
    if choice.name is DenseEngineName.TORCH_EXACT:
        from core.dense.torch_exact import TorchExactIndex

        return TorchExactIndex.create(dimension, choice.device, _torch_budget(budget))
    if choice.name in (DenseEngineName.FAISS_GPU_FLAT, DenseEngineName.FAISS_GPU_IVF_FLAT):
        from core.dense.faiss_gpu_index import FaissGpuIndex

        return FaissGpuIndex.create(spec, dimension, _gpu_number(choice.device))
    from core.dense.faiss_index import FaissIndex

    return FaissIndex.create(spec, dimension)


def _load_index(
    choice: EngineChoice, directory: Path, budget: int | None
) -> tuple[DenseIndex, int] | None:
    if choice.name is DenseEngineName.TORCH_EXACT:
        from core.dense.torch_exact import TorchExactIndex

        return TorchExactIndex.load(directory, choice.device, _torch_budget(budget))
    if choice.name in (DenseEngineName.FAISS_GPU_FLAT, DenseEngineName.FAISS_GPU_IVF_FLAT):
        from core.dense.faiss_gpu_index import FaissGpuIndex

        return FaissGpuIndex.load(directory, _gpu_number(choice.device))
    from core.dense.faiss_index import FaissIndex

    return FaissIndex.load(directory)


def _torch_budget(budget: int | None) -> int:
    """`budget`, or the torch engine's default when None."""
    from core.dense.torch_exact import DEFAULT_MEMORY_BUDGET_BYTES

    return DEFAULT_MEMORY_BUDGET_BYTES if budget is None else budget
