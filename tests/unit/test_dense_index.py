"""Contract tests run against every FaissIndex kind, checked against a NumPy exact reference.

Data: 2,000 L2-normalised 64-d vectors drawn around 32 random centres with noise 1.5 (real
embeddings cluster; seeds fixed) and, for the worst case, uniform on the sphere. Recall floors
are the levels documented in core/dense/README.md for the default `DenseIndexSpec`. "auto" runs
with its graph threshold at `AUTO_THRESHOLD` (below the 2,000 vectors), so the suite checks it
after the crossing; the crossing itself has its own tests below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.dense import CorruptIndexFile, DenseIndex, DenseIndexSpec, FaissIndex
from core.dense.spec import HNSW_EF_PER_K

DIM, COUNT, K = 64, 2000, 10
AUTO_THRESHOLD = 1000
KINDS = [pytest.param(kind, id=kind) for kind in ("flat", "hnsw", "ivf_flat", "auto")]
RECALL_FLOOR = {"hnsw": 0.95, "ivf_flat": 0.95, "auto": 0.95}  # clustered data, defaults
UNIFORM_RECALL_FLOOR = {"hnsw": 0.95, "ivf_flat": 0.6, "auto": 0.95}  # no cluster structure


def spec_for(kind: str) -> DenseIndexSpec:
    """The default spec of `kind` ("auto" with its threshold at `AUTO_THRESHOLD`)."""
    if kind == "auto":
        return DenseIndexSpec(kind="auto", auto_graph_threshold=AUTO_THRESHOLD)
    return DenseIndexSpec(kind=kind)


def normalise(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def clustered(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = np.random.default_rng(1234).standard_normal((32, DIM))
    noise = 1.5 * rng.standard_normal((count, DIM))
    return normalise(centres[rng.integers(0, 32, count)] + noise)


VECTORS = clustered(COUNT, seed=7)
QUERIES = clustered(50, seed=8)
ROW_IDS = (np.arange(COUNT, dtype=np.int64) + 1) * 7  # sparse ids, as after deletes


def build(kind: str, vectors: np.ndarray = VECTORS) -> FaissIndex:
    index = FaissIndex.create(spec_for(kind), DIM)
    index.add(ROW_IDS[: len(vectors)], vectors)
    return index


def reference(queries: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k over the vectors of `ids`, by brute force."""
    lookup = dict(zip(ROW_IDS.tolist(), VECTORS, strict=True))
    matrix = np.stack([lookup[i] for i in ids.tolist()])
    similarity = queries @ matrix.T
    order = np.argsort(-similarity, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(similarity, order, axis=1), ids[order]


def assert_well_formed(scores: np.ndarray, ids: np.ndarray, queries: int, k: int) -> None:
    assert scores.shape == ids.shape == (queries, k)
    assert scores.dtype == np.float32 and ids.dtype == np.int64
    np.testing.assert_array_equal(ids < 0, np.isneginf(scores))
    for row_scores, row_ids in zip(scores, ids, strict=True):
        hits = row_ids[row_ids >= 0]
        assert len(set(hits.tolist())) == len(hits)
        assert np.all(row_ids[len(hits) :] == -1)  # padding only at the end
        assert np.all(np.diff(row_scores[: len(hits)]) <= 1e-6)


def assert_exact(scores: np.ndarray, ids: np.ndarray, allowed: np.ndarray, k: int) -> None:
    """Same scores as the exact top-k, and every returned id scored correctly (ties allowed)."""
    ref_scores, ref_ids = reference(QUERIES, allowed, k)
    found = min(k, len(allowed))
    assert np.all(ids[:, :found] >= 0) and np.all(ids[:, found:] == -1)
    np.testing.assert_allclose(scores[:, :found], ref_scores, atol=1e-5)
    lookup = dict(zip(ROW_IDS.tolist(), VECTORS, strict=True))
    assert set(ids[:, :found].ravel().tolist()) <= set(allowed.tolist())
    for query, row_scores, row_ids in zip(QUERIES, scores, ids, strict=True):
        actual = [float(query @ lookup[i]) for i in row_ids[:found].tolist()]
        np.testing.assert_allclose(row_scores[:found], actual, atol=1e-5)


def recall(ids: np.ndarray, ref_ids: np.ndarray) -> float:
    overlaps = [len(set(a.tolist()) & set(b.tolist())) for a, b in zip(ids, ref_ids, strict=True)]
    return sum(overlaps) / ref_ids.size


@pytest.mark.parametrize("kind", KINDS)
def test_search_results_are_well_formed(kind: str) -> None:
    index: DenseIndex = build(kind)
    assert index.ntotal == COUNT and index.dimension == DIM
    scores, ids = index.search(QUERIES, K)
    assert_well_formed(scores, ids, len(QUERIES), K)
    assert set(ids.ravel().tolist()) <= set(ROW_IDS.tolist())


@pytest.mark.parametrize("kind", KINDS)
def test_k_beyond_ntotal_pads_with_minus_one(kind: str) -> None:
    index = build(kind, VECTORS[:5])
    scores, ids = index.search(QUERIES[:3], 8)
    assert_well_formed(scores, ids, 3, 8)
    assert (ids >= 0).sum(axis=1).tolist() == [5, 5, 5]
    empty = FaissIndex.create(spec_for(kind), DIM)
    assert_well_formed(*empty.search(QUERIES[:2], 3), 2, 3)


def test_flat_equals_numpy_exact() -> None:
    scores, ids = build("flat").search(QUERIES, K)
    assert_exact(scores, ids, ROW_IDS, K)


@pytest.mark.parametrize("kind", [pytest.param(k, id=k) for k in RECALL_FLOOR])
def test_approximate_recall_meets_documented_floor(kind: str) -> None:
    _, ids = build(kind).search(QUERIES, K)
    _, ref_ids = reference(QUERIES, ROW_IDS, K)
    assert recall(ids, ref_ids) >= RECALL_FLOOR[kind]


@pytest.mark.parametrize("kind", [pytest.param(k, id=k) for k in UNIFORM_RECALL_FLOOR])
def test_recall_on_uniform_sphere_data(kind: str) -> None:
    rng = np.random.default_rng(11)
    data = normalise(rng.standard_normal((COUNT, DIM)))
    queries = normalise(rng.standard_normal((50, DIM)))
    index = FaissIndex.create(spec_for(kind), DIM)
    index.add(ROW_IDS, data)
    order = np.argsort(-(queries @ data.T), axis=1, kind="stable")[:, :K]
    _, ids = index.search(queries, K)
    assert recall(ids, ROW_IDS[order]) >= UNIFORM_RECALL_FLOOR[kind]


@pytest.mark.parametrize("kind", KINDS)
def test_removed_ids_are_never_returned(kind: str) -> None:
    index = build(kind)
    _, before = index.search(QUERIES, K)
    removed = np.unique(np.concatenate([before[:, :5].ravel(), ROW_IDS[::4]]))
    index.remove(removed)
    index.remove(removed[:10])  # removing twice is harmless
    index.remove(np.array([10**12], dtype=np.int64))  # unknown ids are ignored
    assert index.ntotal == COUNT - len(removed)

    scores, ids = index.search(QUERIES, K)
    assert_well_formed(scores, ids, len(QUERIES), K)
    assert np.all(ids >= 0)  # enough live vectors remain to fill every slot
    assert not np.isin(ids, removed).any()
    live = np.setdiff1d(ROW_IDS, removed)
    subset_scores, subset_ids = index.search_subset(QUERIES, K, np.concatenate([removed, live]))
    assert_exact(subset_scores, subset_ids, live, K)


@pytest.mark.parametrize("kind", KINDS)
def test_search_subset_is_exact(kind: str) -> None:
    index = build(kind)
    allowed = np.random.default_rng(3).choice(ROW_IDS, size=300, replace=False)
    with_unknown = np.concatenate([allowed, [10**12, 3]])
    assert_exact(*index.search_subset(QUERIES, K, with_unknown), allowed, K)
    assert_exact(*index.search_subset(QUERIES, K, allowed[:4]), allowed[:4], K)
    none_scores, none_ids = index.search_subset(QUERIES, K, np.array([], dtype=np.int64))
    assert np.all(none_ids == -1) and np.all(np.isneginf(none_scores))


@pytest.mark.parametrize("kind", KINDS)
def test_save_and_load_round_trip(kind: str, tmp_path: Path) -> None:
    index = build(kind)
    index.remove(ROW_IDS[:100])
    index.save(tmp_path, sequence=42)
    assert [p.name for p in tmp_path.iterdir()] == ["dense.gwfaiss"]  # no temp files left
    loaded = FaissIndex.load(tmp_path)
    assert loaded is not None
    restored, sequence = loaded
    assert sequence == 42 and restored.spec == index.spec
    assert restored.ntotal == index.ntotal == COUNT - 100
    for original, copy in zip(index.search(QUERIES, K), restored.search(QUERIES, K), strict=True):
        np.testing.assert_array_equal(original, copy)
    subset = ROW_IDS[50:400]
    for original, copy in zip(
        index.search_subset(QUERIES, K, subset),
        restored.search_subset(QUERIES, K, subset),
        strict=True,
    ):
        np.testing.assert_array_equal(original, copy)


def test_load_missing_and_corrupt(tmp_path: Path) -> None:
    assert FaissIndex.load(tmp_path) is None
    (tmp_path / "dense.gwfaiss").write_bytes(b"not an index")
    with pytest.raises(CorruptIndexFile, match="bad magic number$"):
        FaissIndex.load(tmp_path)


def test_ivf_stays_flat_until_it_can_train() -> None:
    index = FaissIndex.create(DenseIndexSpec(kind="ivf_flat"), DIM)
    index.add(ROW_IDS[:500], VECTORS[:500])
    assert not index.is_trained and index.ntotal == 500
    index.remove(ROW_IDS[:10])
    index.add(ROW_IDS[500:], VECTORS[500:])
    assert index.is_trained and index.ntotal == COUNT - 10
    staged = ROW_IDS[10:500]
    assert_exact(*index.search_subset(QUERIES, K, staged), staged, K)


def test_ivf_explicit_nlist_trains_at_39_points_per_list() -> None:
    index = FaissIndex.create(DenseIndexSpec(kind="ivf_flat", ivf_nlist=8), DIM)
    index.add(ROW_IDS[:311], VECTORS[:311])
    assert not index.is_trained
    index.add(ROW_IDS[311:312], VECTORS[311:312])
    assert index.is_trained


@pytest.mark.parametrize("kind", ["hnsw", "auto"])
def test_graph_refuses_to_re_add_a_removed_id(kind: str) -> None:
    index = FaissIndex.create(DenseIndexSpec(kind=kind, auto_graph_threshold=0), DIM)
    index.add(ROW_IDS[:20], VECTORS[:20])
    index.remove(ROW_IDS[:1])
    assert index.tombstone_count == 1
    with pytest.raises(ValueError, match="^row ids are never reused"):
        index.add(ROW_IDS[:1], VECTORS[:1])


def test_inputs_are_validated() -> None:
    index = FaissIndex.create(DenseIndexSpec(), DIM)
    with pytest.raises(ValueError, match=r"^vectors must have shape \(2, 64\), got \(2, 3\)$"):
        index.add(ROW_IDS[:2], np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="^row_ids must be unique$"):
        index.add(np.array([1, 1]), VECTORS[:2])
    with pytest.raises(ValueError, match="^k must be >= 1, got 0$"):
        index.search(QUERIES, 0)
    with pytest.raises(ValueError, match=r"^queries must have shape \(q, 64\), got \(64,\)$"):
        index.search(QUERIES[0], 1)
    with pytest.raises(ValueError, match=r"^dense index kind 'pq' is unknown"):
        DenseIndexSpec(kind="pq")


@pytest.mark.parametrize("kind", KINDS)
def test_memory_estimate_grows_with_vectors(kind: str) -> None:
    small, large = build(kind, VECTORS[:100]), build(kind)
    assert 0 < small.memory_bytes() < large.memory_bytes()
    assert large.memory_bytes() >= COUNT * DIM * 4


def test_auto_is_exact_flat_until_an_add_crosses_its_threshold(tmp_path: Path) -> None:
    """Deletes before the crossing are real deletes in the flat stage; the add that takes the
    stage past the threshold moves the stage and its batch into a graph; deletes after it are
    tombstones; everything survives a save and load."""
    index = FaissIndex.create(spec_for("auto"), DIM)
    index.add(ROW_IDS[:600], VECTORS[:600])
    index.remove(ROW_IDS[:50])
    index.add(ROW_IDS[600:1050], VECTORS[600:1050])  # 1,000 live vectors: not past 1,000
    assert index.structure == "flat" and not index.is_trained and index.ntotal == 1000
    assert index.tombstone_count == 0  # real deletes
    staged = ROW_IDS[50:1050]
    assert_exact(*index.search(QUERIES, K), staged, K)  # exact while flat

    index.add(ROW_IDS[1050:1500], VECTORS[1050:1500])  # the crossing add
    assert index.structure == "hnsw" and index.is_trained and index.ntotal == 1450
    index.add(ROW_IDS[1500:], VECTORS[1500:])  # added to the graph
    removed_after = ROW_IDS[1000:1100]
    index.remove(removed_after)
    assert index.tombstone_count == 100 and index.ntotal == COUNT - 150
    removed = np.concatenate([ROW_IDS[:50], removed_after])
    live = np.setdiff1d(ROW_IDS, removed)

    for candidate in (index, _reloaded(index, tmp_path)):
        assert candidate.structure == "hnsw" and candidate.ntotal == COUNT - 150
        scores, ids = candidate.search(QUERIES, K)
        assert_well_formed(scores, ids, len(QUERIES), K)
        assert not np.isin(ids, removed).any() and np.all(ids >= 0)
        _, exact_ids = reference(QUERIES, live, K)
        assert recall(ids, exact_ids) >= RECALL_FLOOR["auto"]
        assert_exact(*candidate.search_subset(QUERIES, K, ROW_IDS), live, K)
        with pytest.raises(ValueError, match="^row ids are never reused"):
            candidate.add(removed_after[:1], VECTORS[1000:1001])


def _reloaded(index: FaissIndex, directory: Path) -> FaissIndex:
    index.save(directory, sequence=7)
    loaded = FaissIndex.load(directory)
    assert loaded is not None and loaded[1] == 7 and loaded[0].spec == index.spec
    return loaded[0]


def test_auto_threshold_zero_is_a_graph_from_the_first_add() -> None:
    index = FaissIndex.create(DenseIndexSpec(kind="auto", auto_graph_threshold=0), DIM)
    assert index.structure == "flat" and index.ntotal == 0  # empty: nothing to search yet
    index.add(ROW_IDS[:1], VECTORS[:1])
    assert index.structure == "hnsw"


def test_auto_exact_only_never_leaves_the_flat_stage() -> None:
    """The CPU truth of a GPU copy (`FaissGpuIndex`) stays flat past the threshold."""
    index = FaissIndex.create(spec_for("auto"), DIM, exact_only=True)
    index.add(ROW_IDS, VECTORS)
    assert index.structure == "flat"
    assert_exact(*index.search(QUERIES, K), ROW_IDS, K)


def test_graph_search_is_never_narrower_than_a_multiple_of_k() -> None:
    """A deep search (k 50) of a graph built with a small candidate list still finds what an
    exact search finds: the search widens its list to `HNSW_EF_PER_K` x k."""
    spec = DenseIndexSpec(kind="auto", auto_graph_threshold=0, hnsw_ef_search=8)
    assert spec.ef_search_for(50) == HNSW_EF_PER_K * 50 and spec.ef_search_for(1) == 8
    index = FaissIndex.create(spec, DIM)
    index.add(ROW_IDS, VECTORS)
    _, ids = index.search(QUERIES, 50)
    _, exact_ids = reference(QUERIES, ROW_IDS, 50)
    assert recall(ids, exact_ids) >= 0.995  # FAISS's own floor, a list of k (50), gives 0.983


def test_auto_threshold_is_validated() -> None:
    with pytest.raises(ValueError, match="^auto_graph_threshold must be >= 0, got -1$"):
        DenseIndexSpec(kind="auto", auto_graph_threshold=-1)
    assert DenseIndexSpec().kind == "auto"  # the default of new collections
