"""The dense-index contract run against `TorchExactIndex` on CPU (fp32).

Data, reference and assertion helpers are those of tests/unit/test_dense_index.py (2,000
clustered, L2-normalised 64-d vectors with sparse row ids), so every engine is held to the same
exact top-k; fp32 scores agree with NumPy within 1e-5.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from core.dense import CorruptIndexFile, DenseIndex, DenseIndexSpec, FaissIndex
from core.dense.torch_exact import FP32_SCORE_TOLERANCE, TorchExactIndex
from core.dense.torch_topk import tile_rows
from tests.unit.test_dense_index import (
    COUNT,
    DIM,
    QUERIES,
    ROW_IDS,
    VECTORS,
    K,
    assert_exact,
    assert_well_formed,
)

BUDGETS = [
    pytest.param(1, id="one-row-tiles"),
    pytest.param(50 * 8 * 37, id="37-row-tiles"),
    pytest.param(1 << 30, id="untiled"),
]


def build(vectors: np.ndarray = VECTORS, budget: int = 1 << 30) -> TorchExactIndex:
    index = TorchExactIndex.create(DIM, device="cpu", memory_budget_bytes=budget)
    index.add(ROW_IDS[: len(vectors)], vectors)
    return index


def test_search_results_are_well_formed() -> None:
    index: DenseIndex = build()
    assert index.ntotal == COUNT and index.dimension == DIM
    scores, ids = index.search(QUERIES, K)
    assert_well_formed(scores, ids, len(QUERIES), K)
    assert set(ids.ravel().tolist()) <= set(ROW_IDS.tolist())


def test_k_beyond_ntotal_pads_with_minus_one() -> None:
    index = build(VECTORS[:5])
    scores, ids = index.search(QUERIES[:3], 8)
    assert_well_formed(scores, ids, 3, 8)
    assert (ids >= 0).sum(axis=1).tolist() == [5, 5, 5]
    empty = TorchExactIndex.create(DIM)
    assert_well_formed(*empty.search(QUERIES[:2], 3), 2, 3)


@pytest.mark.parametrize("budget", BUDGETS)
def test_equals_numpy_exact(budget: int) -> None:
    scores, ids = build(budget=budget).search(QUERIES, K)
    assert_exact(scores, ids, ROW_IDS, K)


def test_agrees_with_faiss_flat() -> None:
    faiss_index = FaissIndex.create(DenseIndexSpec(kind="flat"), DIM)
    faiss_index.add(ROW_IDS, VECTORS)
    ref_scores, ref_ids = faiss_index.search(QUERIES, K)
    scores, ids = build().search(QUERIES, K)
    np.testing.assert_allclose(scores, ref_scores, atol=FP32_SCORE_TOLERANCE)
    np.testing.assert_array_equal(ids, ref_ids)  # random data: no exact ties


@pytest.mark.parametrize("budget", BUDGETS)
def test_tiling_matches_untiled(budget: int) -> None:
    untiled, tiled = build(), build(budget=budget)
    allowed = ROW_IDS[::3]
    for k in (1, K, 64):  # 64 exceeds the 37-row tiles
        expected = untiled.search(QUERIES, k)
        actual = tiled.search(QUERIES, k)
        np.testing.assert_array_equal(actual[1], expected[1])
        np.testing.assert_allclose(actual[0], expected[0], atol=1e-6)
        expected = untiled.search_subset(QUERIES, k, allowed)
        actual = tiled.search_subset(QUERIES, k, allowed)
        np.testing.assert_array_equal(actual[1], expected[1])
        np.testing.assert_allclose(actual[0], expected[0], atol=1e-6)


def test_tile_rows_respects_the_budget() -> None:
    assert tile_rows(queries=50, element_bytes=4, memory_budget_bytes=50 * 4 * 37) == 37
    assert tile_rows(queries=50, element_bytes=2, memory_budget_bytes=1) == 1
    assert tile_rows(queries=0, element_bytes=2, memory_budget_bytes=60) == 30


def test_removed_ids_are_never_returned() -> None:
    index = build(budget=64 * 1024)
    _, before = index.search(QUERIES, K)
    removed = np.unique(np.concatenate([before[:, :5].ravel(), ROW_IDS[::4]]))
    index.remove(removed)
    index.remove(removed[:10])  # removing twice is harmless
    index.remove(np.array([10**12], dtype=np.int64))  # unknown ids are ignored
    assert index.ntotal == COUNT - len(removed)
    assert index.tombstone_count == len(removed)

    scores, ids = index.search(QUERIES, K)
    assert_well_formed(scores, ids, len(QUERIES), K)
    assert np.all(ids >= 0) and not np.isin(ids, removed).any()
    live = np.setdiff1d(ROW_IDS, removed)
    assert_exact(scores, ids, live, K)
    subset_scores, subset_ids = index.search_subset(QUERIES, K, np.concatenate([removed, live]))
    assert_exact(subset_scores, subset_ids, live, K)


def test_mass_removal_compacts_and_stays_exact() -> None:
    index = build()
    removed = ROW_IDS[:1500]
    index.remove(removed)
    assert index.tombstone_count == 0 and index.ntotal == COUNT - 1500
    assert_exact(*index.search(QUERIES, K), ROW_IDS[1500:], K)
    index.add(removed[:10], VECTORS[:10])  # a removed id may come back
    assert_exact(*index.search(QUERIES, K), np.concatenate([removed[:10], ROW_IDS[1500:]]), K)


def test_search_subset_is_exact() -> None:
    index = build()
    allowed = np.random.default_rng(3).choice(ROW_IDS, size=300, replace=False)
    with_unknown = np.concatenate([allowed, [10**12, 3]])
    assert_exact(*index.search_subset(QUERIES, K, with_unknown), allowed, K)
    assert_exact(*index.search_subset(QUERIES, K, allowed[:4]), allowed[:4], K)
    none_scores, none_ids = index.search_subset(QUERIES, K, np.array([], dtype=np.int64))
    assert np.all(none_ids == -1) and np.all(np.isneginf(none_scores))


def test_tensor_queries_give_the_same_results() -> None:
    index = build()
    from_numpy = index.search(QUERIES, K)
    from_tensor = index.search(torch.from_numpy(QUERIES), K)
    for expected, actual in zip(from_numpy, from_tensor, strict=True):
        np.testing.assert_array_equal(actual, expected)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    index = build()
    index.remove(ROW_IDS[:100])
    index.save(tmp_path, sequence=42)
    assert [p.name for p in tmp_path.iterdir()] == ["dense.gwtorch"]  # no temp files left
    loaded = TorchExactIndex.load(tmp_path)
    assert loaded is not None
    restored, sequence = loaded
    assert sequence == 42 and restored.dimension == DIM
    assert restored.ntotal == index.ntotal == COUNT - 100 and restored.tombstone_count == 0
    subset = ROW_IDS[50:400]
    pairs = [
        (index.search(QUERIES, K), restored.search(QUERIES, K)),
        (index.search_subset(QUERIES, K, subset), restored.search_subset(QUERIES, K, subset)),
    ]
    for (scores, ids), (copy_scores, copy_ids) in pairs:
        np.testing.assert_array_equal(copy_ids, ids)
        np.testing.assert_allclose(copy_scores, scores, atol=1e-6)


def test_load_missing_and_corrupt(tmp_path: Path) -> None:
    assert TorchExactIndex.load(tmp_path) is None
    (tmp_path / "dense.gwtorch").write_bytes(b"not an index")
    with pytest.raises(CorruptIndexFile, match="bad magic number$"):
        TorchExactIndex.load(tmp_path)
    build(VECTORS[:3]).save(tmp_path, sequence=1)
    data = (tmp_path / "dense.gwtorch").read_bytes()
    (tmp_path / "dense.gwtorch").write_bytes(data[:-4])
    with pytest.raises(CorruptIndexFile, match=r"file has \d+ bytes, expected \d+$"):
        TorchExactIndex.load(tmp_path)


def test_inputs_are_validated() -> None:
    index = TorchExactIndex.create(DIM)
    with pytest.raises(ValueError, match=r"^vectors must have shape \(2, 64\), got \(2, 3\)$"):
        index.add(ROW_IDS[:2], np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="^row_ids must be unique$"):
        index.add(np.array([1, 1]), VECTORS[:2])
    index.add(ROW_IDS[:2], VECTORS[:2])
    with pytest.raises(ValueError, match="^row id 14 is already in the index$"):
        index.add(ROW_IDS[1:3], VECTORS[1:3])
    with pytest.raises(ValueError, match="^k must be >= 1, got 0$"):
        index.search(QUERIES, 0)
    with pytest.raises(ValueError, match=r"^queries must have shape \(q, 64\), got \(64,\)$"):
        index.search(QUERIES[0], 1)
    with pytest.raises(ValueError, match="^memory_budget_bytes must be >= 1, got 0$"):
        TorchExactIndex.create(DIM, memory_budget_bytes=0)


def test_memory_estimate_grows_with_vectors() -> None:
    small, large = build(VECTORS[:100]), build()
    assert 0 < small.memory_bytes() < large.memory_bytes()
    assert large.memory_bytes() >= COUNT * DIM * 4
