"""Context assembly: citation tags and budgeted, ordered context text for generators."""

from __future__ import annotations

from core.context.assembly import AssembledContext, ContextBudget, assemble_context
from core.context.citations import (
    ContextCitation,
    citation_for,
    citation_tag,
    parse_citation_tags,
)

__all__ = [
    "AssembledContext",
    "ContextBudget",
    "ContextCitation",
    "assemble_context",
    "citation_for",
    "citation_tag",
    "parse_citation_tags",
]
