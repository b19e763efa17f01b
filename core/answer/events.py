"""What an answer stream emits, as domain objects."""

from __future__ import annotations

from dataclasses import dataclass

from core.context.budget import ContextBudget
from core.context.citations import ContextCitation
from core.retrieve.request import RetrievalResult


@dataclass(frozen=True, slots=True)
class AnswerStarted:
    """First event: the retrieval the answer is grounded in, the template chosen and the context
    budget the retrieval applied (lower than requested when the prompt had to fit a context
    window; the retrieval's warnings then say so)."""

    retrieval: RetrievalResult
    template: str
    budget: ContextBudget


@dataclass(frozen=True, slots=True)
class AnswerDelta:
    """Generated text since the previous delta."""

    text: str


@dataclass(frozen=True, slots=True)
class AnswerSummary:
    """Last event: how generation ended, what it cost, and which citations hold."""

    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    citations: tuple[ContextCitation, ...]
    invalid_citations: int
    faithfulness: float
    generator: str
    model: str
    timings: tuple[tuple[str, float], ...]
    rewritten_queries: tuple[str, ...]
    text: str


AnswerEvent = AnswerStarted | AnswerDelta | AnswerSummary
