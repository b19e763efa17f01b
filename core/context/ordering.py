"""Deterministic context order: the retrieval ranking first; among close scores, shallow sections
and new sources.

The ranking is the hits' `rank` (ties: chunk id, row id), not their `score`: a rerank reorders
hits without touching `score` (the fused score), and graph expansion places a linked chunk right
after the hit it came from with a discounted score. Walking the hits in rank order, consecutive
hits form a band while each one's ranking score is within `score_tolerance(s)` of the band's first
score `s` (2 % of `|s|` or 1e-9, whichever is larger) and was given by the same stage: a hit's
ranking score is its rerank score when it was reranked and its `score` otherwise, and reranked
and not-reranked hits never share a band. NaN scores never share a band.

Scores in one band count as tied, and the band is emitted by repeatedly taking the hit with the
smallest key (section depth, source already in the context, -ranking score, rank, chunk id):
shallower sections first, then a document not yet represented before one that is, then the
higher score. Section depth is the number of non-empty parts of the section path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from core.models import Hit

__all__ = [
    "SCORE_CLOSE_ABSOLUTE",
    "SCORE_CLOSE_RELATIVE",
    "order_hits",
    "ranking_score",
    "score_tolerance",
    "section_depth",
]

SCORE_CLOSE_RELATIVE = 0.02
SCORE_CLOSE_ABSOLUTE = 1e-9


def score_tolerance(score: float) -> float:
    """How far from `score` another score may be and still count as close to it."""
    return max(SCORE_CLOSE_RELATIVE * abs(score), SCORE_CLOSE_ABSOLUTE)


def section_depth(hit: Hit) -> int:
    """Non-empty parts of the hit's section path."""
    return sum(1 for part in hit.chunk.section_path if part)


def ranking_score(hit: Hit) -> float:
    """The score that ranked the hit: its rerank score when reranked, else `score`; NaN is -inf."""
    value = hit.scores.rerank if hit.scores.rerank is not None else hit.score
    return -math.inf if math.isnan(value) else value


def _joins(band: list[Hit], hit: Hit) -> bool:
    """Whether `hit`, next in rank order, ties with the band's first hit."""
    first = band[0]
    if (first.scores.rerank is None) != (hit.scores.rerank is None):
        return False
    top, score = ranking_score(first), ranking_score(hit)
    return math.isfinite(top) and math.isfinite(score) and abs(top - score) <= score_tolerance(top)


def _bands(hits: Sequence[Hit]) -> list[list[Hit]]:
    """`hits` in rank order (then chunk id, row id), cut into bands of close scores."""
    ranked = sorted(hits, key=lambda hit: (hit.rank, hit.chunk.chunk_id, hit.chunk.row_id))
    bands: list[list[Hit]] = []
    for hit in ranked:
        if bands and _joins(bands[-1], hit):
            bands[-1].append(hit)
        else:
            bands.append([hit])
    return bands


def order_hits(hits: Sequence[Hit]) -> tuple[Hit, ...]:
    """`hits` in context order (see the module docstring); a new tuple, the input is untouched."""
    ordered: list[Hit] = []
    seen_documents: set[str] = set()
    for band in _bands(hits):
        remaining = list(band)
        while remaining:
            best = min(
                remaining,
                key=lambda hit: (
                    section_depth(hit),
                    hit.chunk.document_id in seen_documents,
                    -ranking_score(hit),
                    hit.rank,
                    hit.chunk.chunk_id,
                    hit.chunk.row_id,
                ),
            )
            remaining.remove(best)
            ordered.append(best)
            seen_documents.add(best.chunk.document_id)
    return tuple(ordered)
