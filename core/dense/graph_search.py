"""Single-query exact search replayed as a CUDA graph (TorchExactIndex on CUDA).

One query's search is a handful of small kernels (matmul, mask, top-k in one or two stages, the id
lookup) whose launch overhead from Python is a large part of its 0.5 ms on an H100. Captured once
for a fixed view of the corpus, a replay launches them all at once; only the query copy in and
the result copy out remain outside the graph.

A graph holds raw pointers into the corpus, id and live-mask tensors and a fixed row count, so it
is valid for one `GraphKey`; the index recaptures when the key changes (rows added, storage
reallocated, tombstones appearing or gone, another k). Removals that only flip the live mask in
place are seen by a replay. A fresh capture is checked against the eager search before use.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.dense.torch_topk import row_ids, top_k_of_rows

__all__ = ["GraphKey", "SingleQueryGraph", "single_query_search"]

_WARM_UP_RUNS = 2  # eager runs on a side stream before the capture, as torch.cuda.graphs requires


@dataclass(frozen=True, slots=True)
class GraphKey:
    """What a captured graph depends on."""

    rows: int
    corpus_ptr: int
    ids_ptr: int
    mask_ptr: int  # 0 when no mask is applied (no tombstones)
    k: int


def single_query_search(
    query: torch.Tensor,
    corpus: torch.Tensor,
    ids: torch.Tensor,
    include: torch.Tensor | None,
    k: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k of one query (1, d) over `corpus` (n, d): (scores float32 (1, k'), row ids int64
    (1, k'), -1 where no included row was left), k' = min(k, n): the eager path's top-k and id
    lookup, free of device synchronisation, so it can be captured."""
    scores = torch.matmul(query, corpus.T)
    if include is not None:
        scores.masked_fill_(~include.unsqueeze(0), float("-inf"))
    best, positions = top_k_of_rows(scores, min(k, corpus.shape[0]))
    return best.float(), row_ids(best, positions, ids)


class SingleQueryGraph:
    """`single_query_search` captured for one corpus view; `run` replays it."""

    def __init__(
        self,
        key: GraphKey,
        corpus: torch.Tensor,
        ids: torch.Tensor,
        include: torch.Tensor | None,
    ) -> None:
        device = corpus.device
        self.key = key
        self._query = torch.zeros((1, corpus.shape[1]), dtype=corpus.dtype, device=device)
        caller = torch.cuda.current_stream(device)
        side = torch.cuda.Stream(device)  # type: ignore[no-untyped-call]
        side.wait_stream(caller)
        with torch.cuda.stream(side):  # warm-up: cuBLAS workspaces, top-k temporaries
            for _ in range(_WARM_UP_RUNS):
                single_query_search(self._query, corpus, ids, include, key.k)
        caller.wait_stream(side)
        self._graph = torch.cuda.CUDAGraph()
        # thread_local: the embedder may run on the GPU from other threads meanwhile
        with torch.cuda.graph(self._graph, capture_error_mode="thread_local"):
            self._scores, self._ids = single_query_search(self._query, corpus, ids, include, key.k)

    def run(self, query: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Scores and row ids on the device for `query` (1, d) in the corpus dtype; they are
        overwritten by the next `run`, so copy them out first."""
        self._query.copy_(query)
        self._graph.replay()
        return self._scores, self._ids
