"""two_stage_top_k against torch.topk: same values, valid positions, masks and ties included;
and the torch engine taking it for one query over a wide corpus, against exact NumPy search."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.dense.torch_exact import TorchExactIndex
from core.dense.torch_topk import TWO_STAGE_MIN_SCORES, top_k_of_rows, two_stage_top_k


def _check(scores: torch.Tensor, k: int, group: int) -> None:
    values, positions = two_stage_top_k(scores, k, group)
    expected, _ = torch.topk(scores, min(k, scores.shape[1]), dim=1)
    torch.testing.assert_close(values, expected, rtol=0, atol=0)
    assert positions.dtype == torch.int64
    assert int(positions.min()) >= 0 and int(positions.max()) < scores.shape[1]
    torch.testing.assert_close(torch.gather(scores, 1, positions), values, rtol=0, atol=0)
    for row in positions:  # k distinct elements, not one element twice
        assert len(set(row.tolist())) == row.numel()


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    queries=st.integers(1, 4),
    count=st.integers(1, 3000),
    k=st.integers(1, 40),
    group=st.sampled_from([1, 7, 64, 256]),
    levels=st.integers(2, 1000),
    masked=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
)
def test_matches_torch_topk(
    queries: int, count: int, k: int, group: int, levels: int, masked: float, seed: int
) -> None:
    generator = torch.Generator().manual_seed(seed)
    # few distinct levels make many ties; masked entries are -inf as the engine sets them
    scores = torch.randint(0, levels, (queries, count), generator=generator).float() / levels
    drop = torch.rand((queries, count), generator=generator) < masked
    scores[drop] = float("-inf")
    _check(scores, k, group)


def test_fp16_wide_rows_with_a_remainder_group() -> None:
    generator = torch.Generator().manual_seed(3)
    scores = torch.randn((2, 70_001), generator=generator).half()
    _check(scores, 10, 1024)


def test_k_above_the_group_falls_back_to_one_stage() -> None:
    scores = torch.randn((1, 5000))
    _check(scores, 300, 256)


def test_top_k_of_rows_uses_two_stages_only_for_few_wide_rows() -> None:
    wide = torch.randn((1, TWO_STAGE_MIN_SCORES + 5))
    torch.testing.assert_close(top_k_of_rows(wide, 10)[0], torch.topk(wide, 10, dim=1)[0])
    many = torch.randn((16, 3000))
    torch.testing.assert_close(top_k_of_rows(many, 10)[0], torch.topk(many, 10, dim=1)[0])


def test_engine_single_query_over_a_wide_corpus_is_exact() -> None:
    rng = np.random.default_rng(11)
    rows = TWO_STAGE_MIN_SCORES + 1234
    vectors = rng.standard_normal((rows, 32), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(10, 10 + rows, dtype=np.int64)
    index = TorchExactIndex.create(32, "cpu", memory_budget_bytes=1 << 30)
    index.add(ids, vectors)
    index.remove(ids[::3])
    query = rng.standard_normal((1, 32), dtype=np.float32)
    scores, found = index.search(query, 10)
    live = np.ones(rows, dtype=bool)
    live[::3] = False
    exact = vectors @ query[0]
    exact[~live] = -np.inf
    order = np.argsort(-exact)[:10]
    np.testing.assert_array_equal(found[0], ids[order])
    np.testing.assert_allclose(scores[0], exact[order], atol=1e-5)
