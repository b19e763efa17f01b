"""Deterministic context order: score first; among close scores, shallow sections and new sources.

Hits are sorted by score (descending; NaN last), then cut into bands from the top: a band holds
the highest remaining score `s` and every hit whose score is within `score_tolerance(s)` of it,
i.e. within 2 % of `|s|` or 1e-9, whichever is larger. Scores in one band count as tied, and the
band is emitted by repeatedly taking the hit with the smallest key
(section depth, source already in the context, -score, chunk id): shallower sections first, then
a document not yet represented before one that is, then the higher score, then the chunk id.
Section depth is the number of non-empty parts of the section path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from core.models import Hit

__all__ = [
    "SCORE_CLOSE_ABSOLUTE",
    "SCORE_CLOSE_RELATIVE",
    "order_hits",
    "score_tolerance",
    "section_depth",
]

SCORE_CLOSE_RELATIVE = 0.02
SCORE_CLOSE_ABSOLUTE = 1e-9


def score_tolerance(score: float) -> float:
    """How far below `score` another score may be and still count as close to it."""
    return max(SCORE_CLOSE_RELATIVE * abs(score), SCORE_CLOSE_ABSOLUTE)


def section_depth(hit: Hit) -> int:
    """Non-empty parts of the hit's section path."""
    return sum(1 for part in hit.chunk.section_path if part)


def _score(hit: Hit) -> float:
    """The score with NaN mapped below every real score."""
    return -math.inf if math.isnan(hit.score) else hit.score


def _bands(hits: Sequence[Hit]) -> list[list[Hit]]:
    """`hits` by score (then chunk id), cut into bands of close scores."""
    ranked = sorted(hits, key=lambda hit: (-_score(hit), hit.chunk.chunk_id, hit.chunk.row_id))
    bands: list[list[Hit]] = []
    for hit in ranked:
        if bands:
            top = _score(bands[-1][0])
            if math.isfinite(top) and top - _score(hit) <= score_tolerance(top):
                bands[-1].append(hit)
                continue
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
                    -_score(hit),
                    hit.chunk.chunk_id,
                    hit.chunk.row_id,
                ),
            )
            remaining.remove(best)
            ordered.append(best)
            seen_documents.add(best.chunk.document_id)
    return tuple(ordered)
