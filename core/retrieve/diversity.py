"""Diversity of the final hits: at most n hits per document, and maximal marginal relevance.

Both reorder the ranked hits only (nothing is searched again) and leave the hits they push down
after the ones they keep, so the list can still be cut to top_k afterwards.

MMR (Carbonell & Goldstein, 1998) picks, one at a time, the hit maximising

    lambda * relevance(hit) - (1 - lambda) * max cosine(hit, hits already picked)

where relevance is the hit's own score min-max normalised over the candidates, so lambda = 1 is
exactly the plain ranking and lambda = 0 ranks by novelty alone after the first hit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.errors import InvalidArgument
from core.models import Hit, renumbered


def validate_mmr_lambda(value: float, field: str = "mmr_lambda") -> float:
    """`value` when it lies in [0, 1], else InvalidArgument naming `field` and the range."""
    if not 0.0 <= value <= 1.0:
        raise InvalidArgument.field(
            field,
            f"must be between 0 and 1 (1 = plain ranking, lower = more diverse); got {value:g}",
        )
    return value


def at_most_per_document(hits: Sequence[Hit], limit: int) -> list[Hit]:
    """`hits` with at most `limit` per document first (in order), the rest after; 0 = no limit."""
    if limit <= 0:
        return list(hits)
    kept: list[Hit] = []
    later: list[Hit] = []
    per_document: dict[str, int] = {}
    for hit in hits:
        seen = per_document.get(hit.chunk.document_id, 0)
        (kept if seen < limit else later).append(hit)
        per_document[hit.chunk.document_id] = seen + 1
    return renumbered(kept + later)


def maximal_marginal_relevance(
    hits: Sequence[Hit], vectors: np.ndarray, mmr_lambda: float, k: int
) -> list[Hit]:
    """The first `k` hits in MMR order, then the others in their old order.

    `vectors`: float32 (len(hits), d) unit vectors, row i the chunk vector of hits[i].
    """
    if not hits:
        return []
    scores = np.array([hit.score for hit in hits], dtype=np.float64)
    span = float(scores.max() - scores.min())
    relevance = (scores - scores.min()) / span if span > 0 else np.ones_like(scores)
    similarity = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    chosen: list[int] = []
    redundancy = np.full(len(hits), -np.inf)
    remaining = list(range(len(hits)))
    while remaining and len(chosen) < k:
        penalty = np.where(np.isfinite(redundancy), redundancy, 0.0)
        value = mmr_lambda * relevance - (1.0 - mmr_lambda) * penalty
        best = max(remaining, key=lambda i: (value[i], -i))  # ties keep the old order
        chosen.append(best)
        remaining.remove(best)
        redundancy = np.maximum(redundancy, similarity[best])
    return renumbered([hits[i] for i in chosen] + [hits[i] for i in remaining])
