"""A cheap first ranking of candidate sentences, so only the best few are embedded.

Each candidate gets BM25 against the question's keywords (the candidates being the collection,
`core.context.summary.lexical_sentence_scores`) divided by the best candidate's BM25, plus
`passage_weight / (1 + passage)` (passages come in retrieval order, so earlier passages ranked
higher) plus `lead_weight` for the first sentence of its passage (sections tend to answer first).
No model work: a few microseconds per sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.answer.sentence_candidates import SentenceCandidate
from core.context.summary import lexical_sentence_scores

__all__ = ["LEAD_WEIGHT", "PASSAGE_WEIGHT", "prefilter_scores", "shortlist", "with_priors"]

PASSAGE_WEIGHT = 0.5
LEAD_WEIGHT = 0.25


def prefilter_scores(
    query: str,
    candidates: Sequence[SentenceCandidate],
    passage_weight: float = PASSAGE_WEIGHT,
    lead_weight: float = LEAD_WEIGHT,
) -> list[float]:
    """One cheap relevance score per candidate, higher is more relevant."""
    lexical = lexical_sentence_scores(query, [candidate.text for candidate in candidates])
    return with_priors(lexical, candidates, passage_weight, lead_weight)


def with_priors(
    lexical: Sequence[float],
    candidates: Sequence[SentenceCandidate],
    passage_weight: float = PASSAGE_WEIGHT,
    lead_weight: float = LEAD_WEIGHT,
) -> list[float]:
    """`prefilter_scores` from the candidates' BM25 scores (`lexical_sentence_scores`)."""
    best = max(lexical, default=0.0)
    return [
        (score / best if best > 0 else 0.0)
        + passage_weight / (1 + candidate.passage)
        + (lead_weight if candidate.position == 0 else 0.0)
        for score, candidate in zip(lexical, candidates, strict=True)
    ]


def shortlist(
    query: str,
    candidates: Sequence[SentenceCandidate],
    limit: int,
    passage_weight: float = PASSAGE_WEIGHT,
    lead_weight: float = LEAD_WEIGHT,
) -> list[int]:
    """Indices of the `limit` best candidates by `prefilter_scores`, best first (ties: context
    order); all of them, in that order, when there are no more than `limit`."""
    scores = prefilter_scores(query, candidates, passage_weight, lead_weight)
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    return order[: max(limit, 0)]
