"""The reranker contract: one Protocol, one module per implementation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from core.errors import UpstreamFailure

__all__ = ["Reranker", "RerankOutcome", "ReportingReranker", "run_reranker"]


class Reranker(Protocol):
    """Scores passages against a query; a higher score means more relevant.

    Scores are on the model's own scale (cross-encoder logits, LLM rank positions) and only
    comparable within one call.
    """

    name: str  # e.g. "cross-encoder:/models/ms-marco-MiniLM-L-6-v2", "llm:gemma-3-270m"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, in the order given. Blocking; run it off the event loop."""
        ...


@dataclass(frozen=True, slots=True)
class RerankOutcome:
    """Scores for one rerank call and, when the reranker fell back, why (empty otherwise)."""

    scores: tuple[float, ...]
    warning: str = ""


@runtime_checkable
class ReportingReranker(Reranker, Protocol):
    """A reranker that can fall back (keep the input order) and says so, e.g. the LLM reranker."""

    def score_with_warning(self, query: str, passages: Sequence[str]) -> RerankOutcome:
        """Scores, plus a warning when they are a fallback rather than the model's judgement."""
        ...


def run_reranker(reranker: Reranker, query: str, passages: Sequence[str]) -> RerankOutcome:
    """Score `passages` with `reranker`, collecting its warning when it reports one.

    Raises UpstreamFailure when the reranker returns the wrong number of scores or a score that
    is not finite (NaN or infinite), so the caller can keep the fused order.
    """
    if isinstance(reranker, ReportingReranker):
        outcome = reranker.score_with_warning(query, passages)
    else:
        outcome = RerankOutcome(tuple(float(s) for s in reranker.score(query, passages)))
    if len(outcome.scores) != len(passages):
        raise UpstreamFailure(
            f"reranker {reranker.name} returned {len(outcome.scores)} scores "
            f"for {len(passages)} passages"
        )
    for index, value in enumerate(outcome.scores):
        if not math.isfinite(value):
            raise UpstreamFailure(
                f"reranker {reranker.name} returned a non-finite score ({value}) "
                f"for passage {index}"
            )
    return outcome
