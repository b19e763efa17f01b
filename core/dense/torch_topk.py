"""Exact masked inner-product top-k with torch, tiled over the corpus to a memory budget.

Runs wherever the tensors live (CPU or CUDA): each tile's scores are one matmul in the corpus
dtype (fp16 on CUDA: the matmul accumulates in float32 and rounds its output), excluded rows get
-inf before the tile's top-k, and the running best k are merged with each tile's best k. No
temporary is larger than `memory_budget_bytes` (beyond one row of the corpus per query).
"""

from __future__ import annotations

import torch


def tile_rows(queries: int, element_bytes: int, memory_budget_bytes: int) -> int:
    """Corpus rows per tile so that the (queries, rows) score block fits the budget (>= 1).

    A tile's scores stay in the corpus dtype (`element_bytes`): masking and top-k work on them
    directly, and only the k best per query are converted to float32.
    """
    per_row = max(1, queries) * element_bytes
    return max(1, memory_budget_bytes // per_row)


def tiled_top_k(
    queries: torch.Tensor,
    corpus: torch.Tensor,
    include: torch.Tensor | None,
    k: int,
    memory_budget_bytes: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k rows of `corpus` by inner product with each query, among rows where `include`.

    `queries`: (q, d) in the corpus dtype and device; `corpus`: (n, d); `include`: bool (n,), or
    None when every row is included (no masking pass).
    Returns (scores float32 (q, min(k, n)), row positions int64 (q, min(k, n))), best first;
    slots with no included row score -inf (their positions are arbitrary).
    """
    count = corpus.shape[0]
    take = min(k, count)
    rows = tile_rows(queries.shape[0], corpus.element_size(), memory_budget_bytes)
    best_scores: torch.Tensor | None = None
    best_positions: torch.Tensor | None = None
    for start in range(0, count, rows):
        stop = min(start + rows, count)
        scores = torch.matmul(queries, corpus[start:stop].T)
        if include is not None:
            scores.masked_fill_(~include[start:stop].unsqueeze(0), float("-inf"))
        tile_scores, tile_positions = torch.topk(scores, min(take, stop - start), dim=1)
        tile_positions += start
        del scores
        if best_scores is None or best_positions is None:
            best_scores, best_positions = tile_scores, tile_positions
            continue
        merged_scores = torch.cat([best_scores, tile_scores], dim=1)
        merged_positions = torch.cat([best_positions, tile_positions], dim=1)
        best_scores, order = torch.topk(merged_scores, min(take, merged_scores.shape[1]), dim=1)
        best_positions = torch.gather(merged_positions, 1, order)
    if best_scores is None or best_positions is None:
        empty = torch.empty((queries.shape[0], 0), device=queries.device)
        return empty.float(), empty.long()
    return best_scores.float(), best_positions
