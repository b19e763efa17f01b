"""`TorchExactIndex` on CUDA (fp16) against FaissIndex flat on CPU, and the query micro-batcher
with the real model on CUDA (fp16) against CPU. Skipped without a CUDA device.

Tolerances: dense scores |delta| <= FP16_SCORE_TOLERANCE (2e-3) against exact float32 search, ids
equal to the reference except between hits whose scores lie within that tolerance; fp16 query
embeddings within 5e-3 per element (cosine >= 0.999) of the fp32 CPU embeddings.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import torch

from core.dense import DenseIndexSpec, FaissIndex
from core.dense.torch_exact import FP16_SCORE_TOLERANCE, TorchExactIndex
from core.embed.micro_batcher import MicroBatchingEmbedder
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)
from tests.unit.test_dense_index import COUNT, DIM, QUERIES, ROW_IDS, VECTORS, K, assert_well_formed
from tests.unit.test_micro_batcher import run_concurrently

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
]

TOL = FP16_SCORE_TOLERANCE
LOOKUP = dict(zip(ROW_IDS.tolist(), VECTORS, strict=True))
Results = tuple[np.ndarray, np.ndarray]


def build_cuda(budget: int = 1 << 30) -> TorchExactIndex:
    index = TorchExactIndex.create(DIM, device="cuda", memory_budget_bytes=budget)
    index.add(ROW_IDS, VECTORS)
    return index


def build_reference() -> FaissIndex:
    index = FaissIndex.create(DenseIndexSpec(kind="flat"), DIM)
    index.add(ROW_IDS, VECTORS)
    return index


def assert_matches_reference(actual: Results, expected: Results, allowed: np.ndarray) -> None:
    """Rank-wise scores within TOL, every hit allowed and scored within TOL of its exact score."""
    scores, ids = actual
    ref_scores, ref_ids = expected
    assert_well_formed(scores, ids, *ids.shape)
    np.testing.assert_array_equal(ids >= 0, ref_ids >= 0)
    hits = ids >= 0
    assert np.all(np.abs(scores[hits] - ref_scores[hits]) <= TOL)
    assert set(ids[hits].tolist()) <= set(allowed.tolist())
    for query, row_scores, row_ids, row_ref in zip(QUERIES, scores, ids, ref_scores, strict=True):
        found = row_ids[row_ids >= 0].tolist()
        exact = np.array([float(query @ LOOKUP[i]) for i in found], dtype=np.float32)
        assert np.all(np.abs(exact - row_scores[: len(found)]) <= TOL)
        assert np.all(exact >= row_ref[len(found) - 1] - 2 * TOL)  # a swap is a near-tie only


def test_cuda_index_keeps_fp16_on_the_device() -> None:
    index = build_cuda()
    assert index.device.startswith("cuda") and index.score_tolerance == TOL
    assert index.memory_bytes() >= COUNT * DIM * 2


@pytest.mark.parametrize(
    "budget", [pytest.param(4096, id="tiled"), pytest.param(1 << 30, id="untiled")]
)
def test_search_matches_faiss_flat(budget: int) -> None:
    actual = build_cuda(budget).search(QUERIES, K)
    assert_matches_reference(actual, build_reference().search(QUERIES, K), ROW_IDS)


def test_queries_already_on_the_device() -> None:
    index = build_cuda()
    on_device = torch.from_numpy(QUERIES).to("cuda", torch.float16)
    actual = index.search(on_device, K)
    assert_matches_reference(actual, build_reference().search(QUERIES, K), ROW_IDS)
    allowed = ROW_IDS[::5]
    subset = index.search_subset(on_device, K, allowed)
    assert_matches_reference(subset, build_reference().search_subset(QUERIES, K, allowed), allowed)


def test_removed_and_subset_on_the_device() -> None:
    index, reference = build_cuda(), build_reference()
    removed = ROW_IDS[::4]
    index.remove(removed)
    reference.remove(removed)
    live = np.setdiff1d(ROW_IDS, removed)
    assert_matches_reference(index.search(QUERIES, K), reference.search(QUERIES, K), live)
    allowed = np.random.default_rng(3).choice(ROW_IDS, size=300, replace=False)
    expected = reference.search_subset(QUERIES, K, allowed)
    actual = index.search_subset(QUERIES, K, allowed)
    assert_matches_reference(actual, expected, np.intersect1d(allowed, live))


def test_save_and_load_on_cuda(tmp_path: Path) -> None:
    index = build_cuda()
    index.remove(ROW_IDS[:100])
    index.save(tmp_path, sequence=7)
    loaded = TorchExactIndex.load(tmp_path, device="cuda")
    assert loaded is not None and loaded[1] == 7
    restored, reference = loaded[0], build_reference()
    reference.remove(ROW_IDS[:100])
    assert restored.ntotal == COUNT - 100 and restored.device.startswith("cuda")
    expected = reference.search(QUERIES, K)
    assert_matches_reference(restored.search(QUERIES, K), expected, ROW_IDS[100:])


@pytest.fixture(scope="module")
def cuda_fp16_embedder() -> SentenceTransformerEmbedder:
    embedder = SentenceTransformerEmbedder(default_model_path(), device="cuda")
    assert embedder.precision == "fp16"  # the default on CUDA
    return embedder


def test_micro_batcher_on_cuda_fp16_matches_cpu(
    cuda_fp16_embedder: SentenceTransformerEmbedder,
) -> None:
    cpu = SentenceTransformerEmbedder(default_model_path(), device="cpu")
    batcher = MicroBatchingEmbedder(cuda_fp16_embedder)
    texts = [f"what does setting number {i} control?" for i in range(32)]
    calls: list[Callable[[], object]] = [partial(batcher.embed_queries, [t]) for t in texts]
    results = run_concurrently(calls)
    batcher.close()
    assert batcher.stats().batches < 32
    expected = cpu.embed_queries(texts)
    for row, result in zip(expected, results, strict=True):
        assert isinstance(result, np.ndarray) and result.dtype == np.float32
        assert np.allclose(result[0], row, atol=5e-3)
        assert float(result[0] @ row) >= 0.999
