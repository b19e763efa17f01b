"""Exact inner-product top-k for a few queries in one pass over the corpus (Triton, CUDA).

The torch path (`torch_topk.tiled_top_k`) writes every score to device memory, converts and
masks them, then runs a top-k over the whole row: several kernels and passes after the matmul.
For one query that leaves it well above the memory floor (reading the fp16 corpus once). This
kernel reads each block of `block_n` corpus rows once, scores it against every query of the batch
(later queries hit L2), masks excluded rows and keeps the block's best k per query; a final
`torch.topk` over the (blocks x k) candidates per query gives the exact answer, because the
global top k is contained in the union of every block's top k.

Only for small query batches (`FUSED_MAX_QUERIES`) and moderate k (`FUSED_MAX_K`): larger batches
are compute- or top-k-bound and go through the matmul path. With no Triton, or on CPU, callers
use the torch path; with TRITON_INTERPRET=1 the kernel runs on CPU tensors (tests).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import torch

FUSED_MAX_QUERIES = 8
FUSED_MAX_K = 128


@dataclass(frozen=True, slots=True)
class KernelConfig:
    """Launch shape: corpus rows per program, dimensions per load, warps per program."""

    block_n: int = 256
    block_d: int = 128
    num_warps: int = 4


DEFAULT_CONFIG = KernelConfig()


@functools.cache
def _kernel() -> Any | None:
    """The compiled-on-first-use Triton kernel, or None when Triton is unavailable."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def block_top_k(
        queries,
        corpus,
        include,
        out_scores,
        out_rows,
        n_rows,
        stride_corpus,
        n_blocks,
        DIM: tl.constexpr,
        N_QUERIES: tl.constexpr,
        K: tl.constexpr,
        BLOCK_N: tl.constexpr,
        BLOCK_D: tl.constexpr,
        HAS_MASK: tl.constexpr,
    ):
        block = tl.program_id(0)
        offsets = tl.arange(0, BLOCK_N)
        rows = block * BLOCK_N + offsets
        in_range = rows < n_rows
        valid = in_range
        if HAS_MASK:
            valid = valid & (tl.load(include + rows, mask=in_range, other=0) != 0)
        for q in range(
            N_QUERIES
        ):  # loops, not unrolled: 8 x 128 unrolled passes took minutes to compile
            acc = tl.zeros([BLOCK_N], dtype=tl.float32)
            for start in range(0, DIM, BLOCK_D):
                cols = start + tl.arange(0, BLOCK_D)
                col_ok = cols < DIM
                tile = tl.load(
                    corpus + rows[:, None] * stride_corpus + cols[None, :],
                    mask=in_range[:, None] & col_ok[None, :],
                    other=0.0,
                )
                vector = tl.load(queries + q * DIM + cols, mask=col_ok, other=0.0)
                acc += tl.sum(tile.to(tl.float32) * vector.to(tl.float32)[None, :], axis=1)
            acc = tl.where(valid, acc, float("-inf"))
            base = (q * n_blocks + block) * K
            for j in range(K):
                best = tl.max(acc, axis=0)
                where = tl.argmax(acc, axis=0)
                tl.store(out_scores + base + j, best)
                tl.store(out_rows + base + j, block * BLOCK_N + where)
                acc = tl.where(offsets == where, float("-inf"), acc)

    return block_top_k


def fused_available(device: torch.device) -> bool:
    """Whether `fused_top_k` can run for tensors on `device` (CUDA with Triton)."""
    return device.type == "cuda" and _kernel() is not None


def fused_applies(queries: int, k: int) -> bool:
    """Whether a batch of `queries` asking for `k` hits takes the fused path."""
    return 1 <= queries <= FUSED_MAX_QUERIES and 1 <= k <= FUSED_MAX_K


def fused_top_k(
    queries: torch.Tensor,
    corpus: torch.Tensor,
    include: torch.Tensor | None,
    k: int,
    config: KernelConfig | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k rows of `corpus` (n, d) by inner product with each of `queries` (q, d), among rows
    where `include` (bool (n,), None for all rows).

    Returns (scores float32 (q, min(k, n)), row positions int64 (q, min(k, n))), best first;
    slots with no included row score -inf. Queries are cast to the corpus dtype, as on the torch
    path, and scores accumulate in float32. `config`: the launch shape (`DEFAULT_CONFIG`).
    """
    shape = config or DEFAULT_CONFIG
    kernel = _kernel()
    if kernel is None:
        raise RuntimeError("Triton is not installed")
    count, dim = corpus.shape
    take = min(k, count)
    n_queries = queries.shape[0]
    if take == 0:
        empty = torch.empty((n_queries, 0), device=corpus.device)
        return empty.float(), empty.long()
    corpus = corpus if corpus.stride(1) == 1 else corpus.contiguous()
    vectors = queries.to(dtype=corpus.dtype).contiguous()
    n_blocks = (count + shape.block_n - 1) // shape.block_n
    scores = torch.empty((n_queries, n_blocks * take), dtype=torch.float32, device=corpus.device)
    rows = torch.empty((n_queries, n_blocks * take), dtype=torch.int32, device=corpus.device)
    mask = include.view(torch.uint8) if include is not None else corpus  # unused when no mask
    kernel[(n_blocks,)](
        vectors,
        corpus,
        mask,
        scores,
        rows,
        count,
        corpus.stride(0),
        n_blocks,
        DIM=dim,
        N_QUERIES=n_queries,
        K=take,
        BLOCK_N=shape.block_n,
        BLOCK_D=shape.block_d,
        HAS_MASK=include is not None,
        num_warps=shape.num_warps,
    )
    best, order = torch.topk(scores, take, dim=1)
    # a -inf slot may name a padding row past the end: keep every position a valid index
    return best, torch.gather(rows, 1, order).long().clamp_(max=count - 1)
