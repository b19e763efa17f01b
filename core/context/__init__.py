"""Context assembly: budget, ordering, dedupe, summaries, citation tags and the assembled text."""

from __future__ import annotations

from core.context.assembly import AssembledContext, assemble_context
from core.context.budget import BudgetUnit, ContextBudget
from core.context.citations import (
    ContextCitation,
    citation_for,
    citation_tag,
    parse_citation_tags,
)
from core.context.summary import SentenceScorer, lexical_sentence_scores

__all__ = [
    "AssembledContext",
    "BudgetUnit",
    "ContextBudget",
    "ContextCitation",
    "SentenceScorer",
    "assemble_context",
    "citation_for",
    "citation_tag",
    "lexical_sentence_scores",
    "parse_citation_tags",
]
