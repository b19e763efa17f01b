"""The dense engine factory: which engine each (spec, device, faiss) gets, and the shared dense
contract run against every engine it can build on CPU.

The contract data and helpers are those of tests/unit/test_dense_index.py (2,000 clustered,
L2-normalised 64-d vectors, sparse row ids). `FaissGpuIndex` runs here with `faiss.clone_index`
standing in for `index_cpu_to_gpu`, so its device-copy bookkeeping (incremental adds, tombstones,
re-copies) is exercised without a GPU; tests/gpu/ runs the same contract on real devices.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import faiss
import numpy as np
import pytest

from core.dense import CorruptIndexFile, DenseIndex, DenseIndexSpec, FaissIndex
from core.dense.engine_factory import (
    DenseEngine,
    DenseEngineName,
    FaissSupport,
    choose_engine,
    create_dense_engine,
    load_dense_engine,
    probe_faiss,
)
from core.dense.faiss_gpu_index import GPU_MAX_K, MAX_DEVICE_TOMBSTONES, FaissGpuIndex
from core.dense.torch_exact import TorchExactIndex
from tests.unit.test_dense_index import (
    COUNT,
    DIM,
    QUERIES,
    RECALL_FLOOR,
    ROW_IDS,
    VECTORS,
    K,
    assert_exact,
    assert_well_formed,
    recall,
    reference,
    spec_for,
)

CPU_FAISS = FaissSupport(installed=True, gpus=0)
GPU_FAISS = FaissSupport(installed=True, gpus=2)
NO_FAISS = FaissSupport(installed=False, gpus=0)


class CountingCopier:
    """`faiss.clone_index` in place of `index_cpu_to_gpu`, counting the copies made."""

    def __init__(self) -> None:
        self.copies = 0

    def __call__(self, index: faiss.Index) -> faiss.Index:
        self.copies += 1
        return faiss.clone_index(index)


def mirrored(kind: str) -> DenseEngine:
    index = FaissGpuIndex(
        FaissIndex.create(spec_for(kind), DIM, exact_only=True), CountingCopier(), "cpu"
    )
    reason = "CPU stand-in for a GPU copy"
    return DenseEngine(index, DenseEngineName.FAISS_GPU_FLAT, "cpu", reason, index.spec)


Builder = Callable[[], DenseEngine]
ENGINES: dict[str, tuple[Builder, float | None]] = {  # builder, recall floor (None: exact)
    "faiss-flat": (lambda: create_dense_engine(DenseIndexSpec(kind="flat"), DIM, "cpu"), None),
    "faiss-hnsw": (
        lambda: create_dense_engine(DenseIndexSpec(kind="hnsw"), DIM, "cpu"),
        RECALL_FLOOR["hnsw"],
    ),
    "faiss-ivf_flat": (
        lambda: create_dense_engine(DenseIndexSpec(kind="ivf_flat"), DIM, "cpu"),
        RECALL_FLOOR["ivf_flat"],
    ),
    "faiss-auto": (
        lambda: create_dense_engine(spec_for("auto"), DIM, "cpu"),
        RECALL_FLOOR["auto"],
    ),
    "torch-exact (no faiss)": (
        lambda: create_dense_engine(DenseIndexSpec(), DIM, "cpu", faiss=NO_FAISS),
        None,
    ),
    "faiss-gpu-flat (CPU copy)": (lambda: mirrored("flat"), None),
    "faiss-gpu-flat auto (CPU copy)": (lambda: mirrored("auto"), None),  # exact past threshold
    "faiss-gpu-ivf_flat (CPU copy)": (lambda: mirrored("ivf_flat"), RECALL_FLOOR["ivf_flat"]),
}
ENGINE_IDS = [pytest.param(name, id=name) for name in ENGINES]


def build(name: str, vectors: np.ndarray = VECTORS) -> DenseIndex:
    index = ENGINES[name][0]().index
    index.add(ROW_IDS[: len(vectors)], vectors)
    return index


# --- which engine -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "device", "support", "expected", "on"),
    [
        pytest.param("flat", "cpu", CPU_FAISS, "faiss-flat", "cpu", id="cpu-flat"),
        pytest.param("hnsw", "cpu", CPU_FAISS, "faiss-hnsw", "cpu", id="cpu-hnsw"),
        pytest.param("ivf_flat", "cpu", CPU_FAISS, "faiss-ivf_flat", "cpu", id="cpu-ivf"),
        pytest.param("flat", "cpu", GPU_FAISS, "faiss-flat", "cpu", id="cpu-device-gpu-faiss"),
        pytest.param("flat", "cuda", GPU_FAISS, "faiss-gpu-flat", "cuda", id="gpu-faiss-flat"),
        pytest.param(
            "ivf_flat", "cuda:1", GPU_FAISS, "faiss-gpu-ivf_flat", "cuda:1", id="gpu-faiss-ivf"
        ),
        pytest.param("hnsw", "cuda", GPU_FAISS, "faiss-hnsw", "cpu", id="gpu-faiss-hnsw-on-cpu"),
        pytest.param("flat", "cuda:2", GPU_FAISS, "torch-exact", "cuda:2", id="gpu-not-in-faiss"),
        pytest.param("flat", "cuda", CPU_FAISS, "torch-exact", "cuda", id="cuda-cpu-faiss-flat"),
        pytest.param("ivf_flat", "cuda", CPU_FAISS, "torch-exact", "cuda", id="cuda-cpu-faiss-ivf"),
        pytest.param("hnsw", "cuda", CPU_FAISS, "faiss-hnsw", "cpu", id="cuda-cpu-faiss-hnsw"),
        pytest.param("hnsw", "cpu", NO_FAISS, "torch-exact", "cpu", id="no-faiss-cpu"),
        pytest.param("flat", "cuda", NO_FAISS, "torch-exact", "cuda", id="no-faiss-cuda"),
        pytest.param("auto", "cpu", CPU_FAISS, "faiss-auto", "cpu", id="cpu-auto"),
        pytest.param("auto", "cuda", GPU_FAISS, "faiss-gpu-flat", "cuda", id="gpu-faiss-auto"),
        pytest.param("auto", "cuda", CPU_FAISS, "torch-exact", "cuda", id="cuda-cpu-faiss-auto"),
        pytest.param("auto", "cpu", NO_FAISS, "torch-exact", "cpu", id="no-faiss-auto"),
    ],
)
def test_engine_choice(
    kind: str, device: str, support: FaissSupport, expected: str, on: str
) -> None:
    choice = choose_engine(DenseIndexSpec(kind=kind), device, support)
    assert (choice.name, choice.device) == (DenseEngineName(expected), on)


def test_choice_reasons_are_readable() -> None:
    reasons = [
        choose_engine(DenseIndexSpec(kind="ivf_flat"), "cuda", CPU_FAISS).reason,
        choose_engine(DenseIndexSpec(kind="hnsw"), "cuda", GPU_FAISS).reason,
        choose_engine(DenseIndexSpec(kind="flat"), "cuda", GPU_FAISS).reason,
        choose_engine(DenseIndexSpec(), "cpu", NO_FAISS).reason,
        choose_engine(DenseIndexSpec(), "cpu", CPU_FAISS).reason,
        choose_engine(DenseIndexSpec(), "cuda", CPU_FAISS).reason,
    ]
    assert reasons == [
        "faiss has no GPU support for cuda: exact fp16 matmul + top-k on torch"
        " (exact, so at least IVF's recall)",
        "kind hnsw: FAISS has no GPU HNSW, so it stays on CPU",
        "faiss reports 2 GPU(s): flat copied to cuda",
        "faiss is not installed: exact search on cpu",
        "kind auto on CPU FAISS (exact flat up to 10000 vectors, then HNSW)",
        "faiss has no GPU support for cuda: exact fp16 matmul + top-k on torch"
        " (auto: exact on a GPU, no graph)",
    ]


def test_probe_sees_this_faiss_build() -> None:
    support = probe_faiss()
    assert support.installed
    if not hasattr(faiss, "StandardGpuResources"):
        assert support.gpus == 0


@pytest.mark.parametrize("kind", [pytest.param(k, id=k) for k in ("flat", "hnsw", "ivf_flat")])
def test_cpu_engines_are_faiss_with_the_spec(kind: str, caplog: pytest.LogCaptureFixture) -> None:
    spec = DenseIndexSpec(kind=kind, hnsw_ef_search=48)
    with caplog.at_level(logging.INFO, logger="core.dense.engine_factory"):
        engine = create_dense_engine(spec, DIM, "cpu", faiss=CPU_FAISS)
    assert isinstance(engine.index, FaissIndex) and engine.index.spec == spec
    assert (engine.name, engine.device) == (f"faiss-{kind}", "cpu")
    assert caplog.messages == [f"dense engine faiss-{kind} on cpu: kind {kind} on CPU FAISS"]


def test_without_faiss_the_torch_engine_serves_every_kind() -> None:
    engine = create_dense_engine(DenseIndexSpec(kind="hnsw"), DIM, "cpu", faiss=NO_FAISS)
    assert isinstance(engine.index, TorchExactIndex) and engine.name == "torch-exact"


# --- the shared contract, every engine ----------------------------------------------------------


@pytest.mark.parametrize("name", ENGINE_IDS)
def test_search_results_are_well_formed(name: str) -> None:
    index = build(name)
    assert index.ntotal == COUNT and index.dimension == DIM
    scores, ids = index.search(QUERIES, K)
    assert_well_formed(scores, ids, len(QUERIES), K)
    assert set(ids.ravel().tolist()) <= set(ROW_IDS.tolist())


@pytest.mark.parametrize("name", ENGINE_IDS)
def test_k_beyond_ntotal_pads_with_minus_one(name: str) -> None:
    scores, ids = build(name, VECTORS[:5]).search(QUERIES[:3], 8)
    assert_well_formed(scores, ids, 3, 8)
    assert (ids >= 0).sum(axis=1).tolist() == [5, 5, 5]
    assert_well_formed(*ENGINES[name][0]().index.search(QUERIES[:2], 3), 2, 3)


@pytest.mark.parametrize("name", ENGINE_IDS)
def test_agrees_with_exact_search(name: str) -> None:
    scores, ids = build(name).search(QUERIES, K)
    floor = ENGINES[name][1]
    if floor is None:
        assert_exact(scores, ids, ROW_IDS, K)
    else:
        assert recall(ids, reference(QUERIES, ROW_IDS, K)[1]) >= floor


@pytest.mark.parametrize("name", ENGINE_IDS)
def test_removed_ids_are_never_returned(name: str) -> None:
    index = build(name)
    _, before = index.search(QUERIES, K)
    removed = np.unique(np.concatenate([before[:, :5].ravel(), ROW_IDS[::4]]))
    index.remove(removed)
    index.remove(removed[:10])
    index.remove(np.array([10**12], dtype=np.int64))
    assert index.ntotal == COUNT - len(removed)
    scores, ids = index.search(QUERIES, K)
    assert_well_formed(scores, ids, len(QUERIES), K)
    assert np.all(ids >= 0) and not np.isin(ids, removed).any()
    live = np.setdiff1d(ROW_IDS, removed)
    assert_exact(*index.search_subset(QUERIES, K, np.concatenate([removed, live])), live, K)


@pytest.mark.parametrize("name", ENGINE_IDS)
def test_search_subset_is_exact(name: str) -> None:
    index = build(name)
    allowed = np.random.default_rng(3).choice(ROW_IDS, size=300, replace=False)
    assert_exact(*index.search_subset(QUERIES, K, np.concatenate([allowed, [10**12]])), allowed, K)
    none_scores, none_ids = index.search_subset(QUERIES, K, np.array([], dtype=np.int64))
    assert np.all(none_ids == -1) and np.all(np.isneginf(none_scores))


@pytest.mark.parametrize(
    ("kind", "support"),
    [
        pytest.param("flat", CPU_FAISS, id="faiss-flat"),
        pytest.param("hnsw", CPU_FAISS, id="faiss-hnsw"),
        pytest.param("ivf_flat", CPU_FAISS, id="faiss-ivf_flat"),
        pytest.param("flat", NO_FAISS, id="torch-exact"),
    ],
)
def test_save_and_load_round_trip(kind: str, support: FaissSupport, tmp_path: Path) -> None:
    spec = DenseIndexSpec(kind=kind)
    engine = create_dense_engine(spec, DIM, "cpu", faiss=support)
    engine.index.add(ROW_IDS, VECTORS)
    engine.index.remove(ROW_IDS[:100])
    engine.index.save(tmp_path, sequence=42)
    loaded = load_dense_engine(tmp_path, spec, DIM, "cpu", faiss=support)
    assert loaded is not None
    restored, sequence = loaded
    assert sequence == 42 and restored.name == engine.name
    assert restored.index.ntotal == COUNT - 100
    for original, copy in zip(
        engine.index.search(QUERIES, K), restored.index.search(QUERIES, K), strict=True
    ):
        np.testing.assert_allclose(copy, original, atol=1e-6)


def test_loaded_engine_reports_the_spec_it_answers_to(tmp_path: Path) -> None:
    saved_spec = DenseIndexSpec(kind="hnsw", hnsw_ef_search=48)
    engine = create_dense_engine(saved_spec, DIM, "cpu", faiss=CPU_FAISS)
    engine.index.add(ROW_IDS[:10], VECTORS[:10])
    engine.index.save(tmp_path / "faiss", sequence=1)
    engine = create_dense_engine(saved_spec, DIM, "cpu", faiss=NO_FAISS)
    engine.index.add(ROW_IDS[:10], VECTORS[:10])
    engine.index.save(tmp_path / "torch", sequence=1)
    wanted = DenseIndexSpec(kind="hnsw")
    faiss_loaded = load_dense_engine(tmp_path / "faiss", wanted, DIM, "cpu", faiss=CPU_FAISS)
    torch_loaded = load_dense_engine(tmp_path / "torch", wanted, DIM, "cpu", faiss=NO_FAISS)
    assert faiss_loaded is not None and faiss_loaded[0].spec == saved_spec  # settings changed
    assert torch_loaded is not None and torch_loaded[0].spec == wanted  # exact: any spec


def test_load_returns_none_for_a_missing_or_foreign_file(tmp_path: Path) -> None:
    spec = DenseIndexSpec()
    assert load_dense_engine(tmp_path, spec, DIM, "cpu", faiss=CPU_FAISS) is None
    faiss_engine = create_dense_engine(spec, DIM, "cpu", faiss=CPU_FAISS)
    faiss_engine.index.add(ROW_IDS[:10], VECTORS[:10])
    faiss_engine.index.save(tmp_path, sequence=3)
    # The torch engine reads only its own format: the caller rebuilds it from the store.
    assert load_dense_engine(tmp_path, spec, DIM, "cpu", faiss=NO_FAISS) is None
    assert load_dense_engine(tmp_path, spec, DIM + 1, "cpu", faiss=CPU_FAISS) is None
    (tmp_path / "dense.gwfaiss").write_bytes(b"not an index")
    with pytest.raises(CorruptIndexFile, match="bad magic number$"):
        load_dense_engine(tmp_path, spec, DIM, "cpu", faiss=CPU_FAISS)


# --- the FAISS GPU engine's device copy ---------------------------------------------------------


def counted(kind: str) -> tuple[FaissGpuIndex, CountingCopier]:
    copier = CountingCopier()
    cpu = FaissIndex.create(DenseIndexSpec(kind=kind), DIM)
    return FaissGpuIndex(cpu, copier, "cpu"), copier


def test_device_copy_is_made_once_and_grows_with_adds() -> None:
    index, copier = counted("flat")
    index.add(ROW_IDS[:1000], VECTORS[:1000])
    assert copier.copies == 0  # copied lazily, on the first search
    index.search(QUERIES, K)
    index.add(ROW_IDS[1000:], VECTORS[1000:])
    assert_exact(*index.search(QUERIES, K), ROW_IDS, K)
    assert copier.copies == 1


def test_removals_become_device_tombstones_until_recopied() -> None:
    index, copier = counted("flat")
    index.add(ROW_IDS, VECTORS)
    index.search(QUERIES, K)
    index.remove(ROW_IDS[:10])
    assert index.device_tombstones == 10
    assert_exact(*index.search(QUERIES, K), ROW_IDS[10:], K)
    index.remove(ROW_IDS[10 : MAX_DEVICE_TOMBSTONES + 20])
    assert_exact(*index.search(QUERIES, K), ROW_IDS[MAX_DEVICE_TOMBSTONES + 20 :], K)
    assert copier.copies == 2 and index.device_tombstones == 0


def test_re_added_id_gets_its_new_vector() -> None:
    index, copier = counted("flat")
    index.add(ROW_IDS, VECTORS)
    index.search(QUERIES, K)
    target = int(ROW_IDS[0])
    index.remove(np.array([target]))
    index.add(np.array([target]), QUERIES[:1])  # now the exact match of query 0
    scores, ids = index.search(QUERIES[:1], 1)
    assert ids[0, 0] == target and scores[0, 0] == pytest.approx(1.0, abs=1e-5)
    assert copier.copies == 2


def test_ivf_training_replaces_the_device_copy() -> None:
    index, copier = counted("ivf_flat")
    index.add(ROW_IDS[:500], VECTORS[:500])
    assert_exact(*index.search(QUERIES, K), ROW_IDS[:500], K)  # staged flat: exact
    index.add(ROW_IDS[500:], VECTORS[500:])  # crosses the training threshold
    _, ids = index.search(QUERIES, K)
    assert recall(ids, reference(QUERIES, ROW_IDS, K)[1]) >= RECALL_FLOOR["ivf_flat"]
    assert copier.copies == 2


def test_k_beyond_the_gpu_limit_is_answered_on_cpu() -> None:
    index, copier = counted("flat")
    index.add(ROW_IDS, VECTORS)
    scores, ids = index.search(QUERIES[:2], GPU_MAX_K + 1)
    assert_well_formed(scores, ids, 2, GPU_MAX_K + 1)
    assert (ids >= 0).sum() == 2 * COUNT and copier.copies == 0
    index.search(QUERIES, K)
    index.remove(ROW_IDS[:100])
    scores, ids = index.search(QUERIES[:2], GPU_MAX_K - 50)  # k + tombstones > limit: re-copy
    assert copier.copies == 2 and index.device_tombstones == 0
    assert (ids >= 0).sum() == 2 * (COUNT - 100) and not np.isin(ids, ROW_IDS[:100]).any()


def test_gpu_engine_refuses_hnsw_and_validates_queries() -> None:
    with pytest.raises(ValueError, match='^FAISS has no GPU HNSW; use kind "flat" or "ivf_flat"'):
        FaissGpuIndex(FaissIndex.create(DenseIndexSpec(kind="hnsw"), DIM), CountingCopier(), "x")
    index, _ = counted("flat")
    index.add(ROW_IDS[:5], VECTORS[:5])
    with pytest.raises(ValueError, match=r"^queries must have shape \(q, 64\), got \(64,\)$"):
        index.search(QUERIES[0], 1)
    with pytest.raises(ValueError, match="^k must be >= 1, got 0$"):
        index.search(QUERIES, 0)
    assert index.memory_bytes() > FaissIndex.create(DenseIndexSpec(), DIM).memory_bytes()
