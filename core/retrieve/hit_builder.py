"""Turn a final ranking plus per-retriever rankings into Hits with per-stage scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.models import Chunk, Hit, StageScores
from core.retrieve.modes import RetrievalMode
from core.retrieve.request import RetrievalRequest

Ranking = Sequence[tuple[int, float]]


def _positions(ranking: Ranking | None) -> dict[int, tuple[int, float]]:
    if ranking is None:
        return {}
    return {row_id: (rank, score) for rank, (row_id, score) in enumerate(ranking, start=1)}


def build_hits(
    final: Ranking,
    dense: Ranking | None,
    lexical: Ranking | None,
    chunks: Mapping[int, Chunk],
    request: RetrievalRequest,
) -> list[Hit]:
    """Hits in `final` order, above the score threshold, at most top_k, ranks 1-based."""
    dense_at, lexical_at = _positions(dense), _positions(lexical)
    hybrid = request.mode is RetrievalMode.HYBRID
    hits: list[Hit] = []
    for row_id, score in final:
        chunk = chunks.get(row_id)
        if chunk is None:
            continue
        if request.score_threshold is not None and score < request.score_threshold:
            continue
        d, lx = dense_at.get(row_id), lexical_at.get(row_id)
        scores = StageScores(
            dense=None if d is None else d[1],
            bm25=None if lx is None else lx[1],
            fused=score if hybrid else None,
            dense_rank=None if d is None else d[0],
            bm25_rank=None if lx is None else lx[0],
        )
        hits.append(Hit(chunk=chunk, rank=len(hits) + 1, score=score, scores=scores))
        if len(hits) == request.top_k:
            break
    return hits
