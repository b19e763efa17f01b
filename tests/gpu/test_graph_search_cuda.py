"""Single-query search replayed as a CUDA graph against the eager search and exact FAISS CPU:
capture on the second search of a view, recapture after removals (mask), additions and another
k, and removals in place seen by a replay. Skipped without a CUDA device."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.dense import DenseIndexSpec, FaissIndex
from core.dense.torch_exact import FP16_SCORE_TOLERANCE, TorchExactIndex
from core.dense.torch_topk import TWO_STAGE_MIN_SCORES
from tests.unit.test_dense_index import DIM, QUERIES, ROW_IDS, VECTORS, K

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
]

TOL = FP16_SCORE_TOLERANCE


def _pair(ids: np.ndarray, vectors: np.ndarray) -> tuple[TorchExactIndex, FaissIndex]:
    graphed = TorchExactIndex.create(DIM, device="cuda")
    graphed.add(ids, vectors)
    reference = FaissIndex.create(DenseIndexSpec(kind="flat"), DIM)
    reference.add(ids, vectors)
    return graphed, reference


def _assert_close(index: TorchExactIndex, reference: FaissIndex, k: int = K) -> None:
    for query in QUERIES[:20]:
        scores, ids = index.search(query[None], k)
        ref_scores, ref_ids = reference.search(query[None], k)
        np.testing.assert_array_equal(ids >= 0, ref_ids >= 0)
        hits = ids >= 0
        assert np.all(np.abs(scores[hits] - ref_scores[hits]) <= TOL)
        swapped = ids[hits] != ref_ids[hits]
        assert np.all(np.abs(scores[hits][swapped] - ref_scores[hits][swapped]) <= TOL)


def test_second_search_of_a_view_captures_and_replays() -> None:
    index, reference = _pair(ROW_IDS, VECTORS)
    assert index.cuda_graphs and index.graph_captures == 0
    _assert_close(index, reference)
    assert index.graph_captures == 1 and index.cuda_graphs
    _assert_close(index, reference)  # replays, no new capture
    assert index.graph_captures == 1


def test_removals_additions_and_k_recapture() -> None:
    index, reference = _pair(ROW_IDS, VECTORS)
    _assert_close(index, reference)
    index.remove(ROW_IDS[::4])
    reference.remove(ROW_IDS[::4])
    _assert_close(index, reference)  # tombstones: a mask appears, so a new view
    assert index.graph_captures == 2
    index.remove(ROW_IDS[1::4])  # flips the live mask in place: the same view, replayed
    reference.remove(ROW_IDS[1::4])
    _assert_close(index, reference)
    assert index.graph_captures == 2
    extra = np.arange(1, 201, dtype=np.int64) * 100_003
    more = np.random.default_rng(5).standard_normal((200, DIM)).astype(np.float32)
    more /= np.linalg.norm(more, axis=1, keepdims=True)
    index.add(extra, more)
    reference.add(extra, more)
    _assert_close(index, reference)
    _assert_close(index, reference, k=25)
    assert index.graph_captures == 4 and index.cuda_graphs


def test_wide_corpus_takes_the_two_stage_top_k_in_the_graph() -> None:
    rows = TWO_STAGE_MIN_SCORES * 2 + 77
    rng = np.random.default_rng(9)
    vectors = rng.standard_normal((rows, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index, reference = _pair(np.arange(rows, dtype=np.int64), vectors)
    _assert_close(index, reference)
    assert index.graph_captures == 1 and index.cuda_graphs
