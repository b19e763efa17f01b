"""The fused Triton top-k kernel against the torch matmul path, run by Triton's interpreter on CPU
(TRITON_INTERPRET=1 in a child process: the flag is read when the kernel is defined). The same
kernel compiled for CUDA is checked in tests/gpu/test_fused_top_k_cuda.py."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = """
import torch
from core.dense.fused_top_k import DEFAULT_CONFIG, KernelConfig, fused_top_k
BLOCK_N = DEFAULT_CONFIG.block_n
from core.dense.torch_topk import tiled_top_k

generator = torch.Generator().manual_seed(0)
cases = [  # rows, queries, k, masked: one block, several blocks with a ragged end, k > rows
    (BLOCK_N, 1, 10, False), (3 * BLOCK_N + 17, 3, 50, True), (5, 2, 10, False),
    (2 * BLOCK_N + 1, 1, 7, True), (BLOCK_N + 3, 2, 4, "sparse"),
]
configs = [None, KernelConfig(128, 64, 8), KernelConfig(512, 128, 8)]
for (rows, queries, k, masked), config in [(c, f) for c in cases for f in configs]:
    corpus = torch.nn.functional.normalize(torch.randn(rows, 384, generator=generator), dim=1)
    query = torch.nn.functional.normalize(torch.randn(queries, 384, generator=generator), dim=1)
    if masked == "sparse":  # fewer included rows than k: the rest must come back as -inf
        include = torch.zeros(rows, dtype=torch.bool)
        include[[0, rows - 1]] = True
    else:
        include = (torch.rand(rows, generator=generator) > 0.5) if masked else None
    scores, positions = fused_top_k(query, corpus, include, k, config)
    want_scores, want_positions = tiled_top_k(query, corpus, include, k, 1 << 20)
    assert scores.shape == want_scores.shape == (queries, min(k, rows)), (scores.shape, rows)
    finite = torch.isfinite(want_scores)
    assert torch.equal(torch.isfinite(scores), finite), (rows, k, masked)
    assert torch.equal(positions[finite], want_positions[finite]), (rows, k, masked)
    assert float((scores[finite] - want_scores[finite]).abs().max()) < 1e-5
    assert int(positions.max()) < rows and int(positions.min()) >= 0
print("fused ok", len(cases) * len(configs))
"""


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton not installed")
def test_fused_kernel_matches_the_matmul_path_under_the_interpreter() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "fused ok 15" in done.stdout


def test_fused_path_only_for_small_batches_and_moderate_k() -> None:
    from core.dense.fused_top_k import FUSED_MAX_K, FUSED_MAX_QUERIES, fused_applies

    assert fused_applies(1, 10) and fused_applies(FUSED_MAX_QUERIES, FUSED_MAX_K)
    assert not fused_applies(FUSED_MAX_QUERIES + 1, 10)
    assert not fused_applies(1, FUSED_MAX_K + 1)
    assert not fused_applies(0, 10)
