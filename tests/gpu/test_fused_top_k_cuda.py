"""The fused Triton top-k kernel compiled for CUDA against exact float64 search over the same
fp16 values, and the torch engine's fused and matmul paths against each other. Skipped without
CUDA or Triton."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from core.dense.fused_top_k import fused_top_k
from core.dense.torch_exact import TorchExactIndex

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
    pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton not installed"),
]

ROWS, DIM = 300_007, 384  # a ragged last block
TIE = 1e-5  # fp32 accumulation of fp16 products vs float64


def _unit(rows: int, seed: int) -> torch.Tensor:
    generator = torch.Generator(device="cuda").manual_seed(seed)
    matrix = torch.randn((rows, DIM), generator=generator, device="cuda")
    return torch.nn.functional.normalize(matrix, dim=1).half()


@pytest.mark.parametrize(
    ("queries", "k", "masked"), [(1, 10, False), (4, 50, True), (8, 128, False)]
)
def test_fused_kernel_is_exact_on_cuda(queries: int, k: int, masked: bool) -> None:
    corpus, query = _unit(ROWS, 1), _unit(queries, 2)
    include = None
    if masked:
        include = (
            torch.rand(ROWS, device="cuda", generator=torch.Generator("cuda").manual_seed(3)) > 0.3
        )
    scores, positions = fused_top_k(query, corpus, include, k)
    exact = (query.double() @ corpus.double().T).cpu().numpy()
    if include is not None:
        exact[:, ~include.cpu().numpy()] = -np.inf
    for row in range(queries):
        order = np.argsort(-exact[row], kind="stable")[:k]
        got = positions[row].cpu().numpy()
        np.testing.assert_allclose(scores[row].cpu().numpy(), exact[row][order], atol=TIE)
        kth = exact[row][order[-1]]
        differ = set(got.tolist()) ^ set(order.tolist())
        assert all(abs(exact[row][p] - kth) <= 2 * TIE for p in differ), differ


def test_engine_fused_and_matmul_paths_agree() -> None:
    index = TorchExactIndex.create(DIM, "cuda", 1 << 28)
    index.fused = True
    ids = np.arange(10, 10 + 50_000, dtype=np.int64)
    vectors = _unit(50_000, 4).float().cpu().numpy()
    index.add(ids, vectors)
    index.remove(ids[::7])  # tombstones: the masked kernel
    queries = _unit(5, 5)
    fused = index.search(queries, 20)
    index.fused = False
    matmul = index.search(queries, 20)
    np.testing.assert_allclose(fused[0], matmul[0], atol=2e-3)  # matmul scores are fp16-rounded
    for row in range(5):  # ids differ only between hits within that rounding of the 20th
        differ = set(fused[1][row].tolist()) ^ set(matmul[1][row].tolist())
        kth = fused[0][row][-1]
        by_id = dict(zip(fused[1][row].tolist(), fused[0][row].tolist(), strict=True))
        by_id.update(zip(matmul[1][row].tolist(), matmul[0][row].tolist(), strict=True))
        assert all(abs(by_id[i] - kth) <= 4e-3 for i in differ), differ
    assert not np.isin(fused[1], ids[::7]).any()
