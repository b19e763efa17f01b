"""Exact masked inner-product top-k with torch, tiled over the corpus to a memory budget.

Runs wherever the tensors live (CPU or CUDA): each tile's scores are one matmul in the corpus
dtype (fp16 on CUDA: the matmul accumulates in float32 and rounds its output), excluded rows get
-inf before the tile's top-k, and the running best k are merged with each tile's best k. No
temporary is larger than `memory_budget_bytes` (beyond one row of the corpus per query).
"""

from __future__ import annotations

import torch

TOP_K_GROUP = 1024
"""Scores per group in the first stage of `two_stage_top_k`."""
TWO_STAGE_MAX_QUERIES = 8
"""Batches up to this size take `two_stage_top_k` over wide tiles (larger ones are matmul-bound)."""
TWO_STAGE_MIN_SCORES = 64 * TOP_K_GROUP
"""Narrower rows take one `torch.topk`: the extra kernels cost more than they save (CPU: 5,000
scores 0.04 ms in one stage, 0.14 ms in two; 1M scores 6.7 ms against 2.9 ms)."""


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
        tile_scores, tile_positions = top_k_of_rows(scores, min(take, stop - start))
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


def top_k_of_rows(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`torch.topk(scores, k, dim=1)`, in two stages for a few wide rows (`two_stage_top_k`)."""
    if scores.shape[0] <= TWO_STAGE_MAX_QUERIES and scores.shape[1] >= TWO_STAGE_MIN_SCORES:
        return two_stage_top_k(scores, k)
    return torch.topk(scores, k, dim=1)


def two_stage_top_k(
    scores: torch.Tensor, k: int, group: int = TOP_K_GROUP
) -> tuple[torch.Tensor, torch.Tensor]:
    """The k largest of each row of `scores` (q, n) and their positions, best first.

    A top-k over one very wide row runs as a single selection (on an H100, 0.11 ms for 1M fp16
    scores, a third of the matmul that produced them). Here each row is cut into groups of
    `group` scores, every group gives its k best in one batched top-k, and a final top-k picks
    the k best of those candidates: exact, because the k best of a row are among the k best of
    their groups. Rows too narrow for two groups, or k above `group`, take `torch.topk` directly.
    Ties may resolve to other positions than `torch.topk` chooses; values are identical.
    """
    queries, count = scores.shape
    take = min(k, count)
    groups = count // group
    if groups < 2 or take > group:
        return torch.topk(scores, take, dim=1)
    head = groups * group
    grouped = scores[:, :head].reshape(queries, groups, group)
    group_scores, group_positions = torch.topk(grouped, take, dim=2)
    offsets = torch.arange(0, head, group, device=scores.device).view(1, groups, 1)
    candidate_scores = group_scores.reshape(queries, groups * take)
    candidate_positions = (group_positions + offsets).reshape(queries, groups * take)
    if head < count:
        tail_scores, tail_positions = torch.topk(scores[:, head:], min(take, count - head), dim=1)
        candidate_scores = torch.cat([candidate_scores, tail_scores], dim=1)
        candidate_positions = torch.cat([candidate_positions, tail_positions + head], dim=1)
    best, order = torch.topk(candidate_scores, take, dim=1)
    return best, torch.gather(candidate_positions, 1, order)


def row_ids(scores: torch.Tensor, positions: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """The row ids at top-k `positions`, -1 where the score is -inf (no included row left)."""
    return torch.where(torch.isneginf(scores), -1, ids[positions])
