"""The dense contract on CUDA for every GPU engine the factory can build, against exact CPU search.

Engines: the torch exact engine on CUDA (fp16 corpus; what the factory picks when faiss has no
GPU build) and, when the installed faiss reports GPUs, FAISS GPU flat and IVF-Flat.
Data: 20,000 random 384-d vectors uniform on the sphere and 64 queries (seeded); the reference
is NumPy exact float32 search on the CPU.

Tolerances: scores within the engine's `score_tolerance`: FP16_SCORE_TOLERANCE (2e-3) for the torch
engine, SCORE_TOLERANCE (1e-4) for FAISS GPU; ids equal to the exact top-k except for near-ties:
an id may differ from the reference only when its exact score is within 2 x tolerance of the
reference's k-th score. The fp16 embedder is held to 5e-3 per element (cosine >= 0.999) of fp32 CPU.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from core.dense import DenseIndex, DenseIndexSpec
from core.dense.engine_factory import (
    DenseEngineName,
    FaissSupport,
    create_dense_engine,
    load_dense_engine,
    probe_faiss,
)
from core.dense.exact import exact_top_k
from core.dense.faiss_gpu_index import SCORE_TOLERANCE
from core.dense.torch_exact import FP16_SCORE_TOLERANCE
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
]

DIM, COUNT, K = 384, 20_000, 10
NO_FAISS = FaissSupport(installed=False, gpus=0)


def sphere(count: int, seed: int) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


VECTORS = sphere(COUNT, seed=21)
QUERIES = sphere(64, seed=22)
ROW_IDS = np.arange(COUNT, dtype=np.int64) * 3 + 5


def faiss_gpu_available() -> bool:
    return probe_faiss().gpus > 0


ENGINES = [
    pytest.param("torch-exact", id="torch-exact"),
    pytest.param(
        "faiss-gpu-flat",
        id="faiss-gpu-flat",
        marks=pytest.mark.skipif(not faiss_gpu_available(), reason="faiss has no GPU support"),
    ),
]
TOLERANCE = {"torch-exact": FP16_SCORE_TOLERANCE, "faiss-gpu-flat": SCORE_TOLERANCE}


def build(name: str, vectors: np.ndarray = VECTORS) -> DenseIndex:
    support = NO_FAISS if name == "torch-exact" else probe_faiss()
    engine = create_dense_engine(DenseIndexSpec(kind="flat"), DIM, "cuda", faiss=support)
    assert engine.name == name and engine.device == "cuda"
    engine.index.add(ROW_IDS[: len(vectors)], vectors)
    return engine.index


def exact(queries: np.ndarray, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows = np.searchsorted(ROW_IDS, allowed)
    return exact_top_k(queries, VECTORS[rows], ROW_IDS[rows], K)


def assert_matches_exact(
    results: tuple[np.ndarray, np.ndarray], allowed: np.ndarray, tolerance: float
) -> None:
    """Scores within `tolerance` rank by rank; ids equal to the exact top-k up to near-ties."""
    scores, ids = results
    ref_scores, ref_ids = exact(QUERIES, allowed)
    assert scores.shape == ids.shape == (len(QUERIES), K)
    np.testing.assert_array_equal(ids >= 0, ref_ids >= 0)
    hits = ids >= 0
    assert np.all(np.abs(scores[hits] - ref_scores[hits]) <= tolerance)
    for query, row_ids, row_ref_ids, row_ref in zip(QUERIES, ids, ref_ids, ref_scores, strict=True):
        swapped = set(row_ids[row_ids >= 0].tolist()) ^ set(row_ref_ids[row_ref_ids >= 0].tolist())
        found = int((row_ids >= 0).sum())
        for row_id in swapped:
            exact_score = float(query @ VECTORS[np.searchsorted(ROW_IDS, row_id)])
            assert abs(exact_score - row_ref[found - 1]) <= 2 * tolerance  # a near-tie only
    assert set(ids[hits].tolist()) <= set(allowed.tolist())


@pytest.mark.parametrize("name", ENGINES)
def test_search_matches_exact_cpu_search(name: str) -> None:
    assert_matches_exact(build(name).search(QUERIES, K), ROW_IDS, TOLERANCE[name])


@pytest.mark.parametrize("name", ENGINES)
def test_removed_ids_and_subsets(name: str) -> None:
    index = build(name)
    removed = ROW_IDS[::3]
    index.remove(removed)
    live = np.setdiff1d(ROW_IDS, removed)
    assert index.ntotal == len(live)
    assert_matches_exact(index.search(QUERIES, K), live, TOLERANCE[name])
    allowed = np.random.default_rng(4).choice(ROW_IDS, size=500, replace=False)
    subset = index.search_subset(QUERIES, K, allowed)
    assert_matches_exact(subset, np.intersect1d(allowed, live), TOLERANCE[name])


@pytest.mark.parametrize("name", ENGINES)
def test_save_and_load_on_cuda(name: str, tmp_path: Path) -> None:
    index = build(name)
    index.save(tmp_path, sequence=9)
    support = NO_FAISS if name == "torch-exact" else probe_faiss()
    loaded = load_dense_engine(tmp_path, DenseIndexSpec(), DIM, "cuda", faiss=support)
    assert loaded is not None and loaded[1] == 9 and loaded[0].name == name
    assert_matches_exact(loaded[0].index.search(QUERIES, K), ROW_IDS, TOLERANCE[name])


def test_torch_engine_takes_fp16_queries_on_the_device() -> None:
    index = build("torch-exact")
    on_device = torch.from_numpy(QUERIES).to("cuda", torch.float16)
    assert_matches_exact(index.search(on_device, K), ROW_IDS, FP16_SCORE_TOLERANCE)


def test_factory_default_on_this_machine() -> None:
    engine = create_dense_engine(DenseIndexSpec(), DIM, "cuda")
    expected = DenseEngineName.FAISS_GPU_FLAT if faiss_gpu_available() else "torch-exact"
    assert engine.name == expected


@pytest.mark.skipif(not faiss_gpu_available(), reason="faiss has no GPU support")
def test_faiss_gpu_ivf_recall_and_exact_subsets() -> None:
    engine = create_dense_engine(DenseIndexSpec(kind="ivf_flat", ivf_nprobe=64), DIM, "cuda")
    assert engine.name == "faiss-gpu-ivf_flat"
    engine.index.add(ROW_IDS, VECTORS)
    _, ids = engine.index.search(QUERIES, K)
    _, ref_ids = exact(QUERIES, ROW_IDS)
    overlap = sum(len(set(a.tolist()) & set(b.tolist())) for a, b in zip(ids, ref_ids, strict=True))
    assert overlap / ref_ids.size >= 0.5  # uniform data, 64 of ~110 lists probed
    allowed = ROW_IDS[::7]
    assert_matches_exact(engine.index.search_subset(QUERIES, K, allowed), allowed, SCORE_TOLERANCE)


@pytest.fixture(scope="module")
def cuda_embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(default_model_path(), device="cuda")


def test_embedder_is_fp16_on_cuda_and_tensors_stay_there(
    cuda_embedder: SentenceTransformerEmbedder,
) -> None:
    assert cuda_embedder.precision == "fp16"
    texts = ["How do I copy a file?", "Why are Python strings immutable?"]
    tensor = cuda_embedder.embed_queries_tensor(texts)
    assert tensor.device.type == "cuda" and tensor.dtype == torch.float16
    norms = tensor.float().norm(dim=1).cpu()
    torch.testing.assert_close(norms, torch.ones(2), atol=2e-3, rtol=0)
    cpu = SentenceTransformerEmbedder(default_model_path(), device="cpu").embed_queries(texts)
    host = cuda_embedder.embed_queries(texts)
    assert host.dtype == np.float32
    assert np.allclose(host, cpu, atol=5e-3) and np.all(np.sum(host * cpu, axis=1) >= 0.999)
    np.testing.assert_allclose(tensor.float().cpu().numpy(), host, atol=1e-3)


def test_embedder_fp32_on_cuda_when_asked() -> None:
    embedder = SentenceTransformerEmbedder(default_model_path(), "cuda", half_precision=False)
    assert embedder.precision == "fp32"
    assert embedder.embed_queries_tensor(["fp32"]).dtype == torch.float32


def test_device_query_vectors_go_straight_into_the_torch_engine(
    cuda_embedder: SentenceTransformerEmbedder,
) -> None:
    passages = ["Use shutil.copy to copy a file.", "Strings are immutable.", "The GIL."]
    engine = create_dense_engine(DenseIndexSpec(), cuda_embedder.dimension, "cuda", faiss=NO_FAISS)
    engine.index.add(np.array([1, 2, 3]), cuda_embedder.embed_documents(passages))
    query = ["How do I copy a file?"]
    from_tensor = engine.index.search(cuda_embedder.embed_queries_tensor(query), 3)
    from_numpy = engine.index.search(cuda_embedder.embed_queries(query), 3)
    np.testing.assert_array_equal(from_tensor[1], from_numpy[1])
    assert from_tensor[1][0, 0] == 1
    np.testing.assert_allclose(from_tensor[0], from_numpy[0], atol=FP16_SCORE_TOLERANCE)
