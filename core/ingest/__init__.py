"""Ingestion: turn a document into chunk drafts (structure-aware for Markdown)."""

from __future__ import annotations

from core.ingest.chunking import MAX_MAX_TOKENS, MIN_MAX_TOKENS, chunk_document
from core.ingest.markdown_chunker import chunk_markdown
from core.ingest.packing import CountTokens
from core.ingest.text_chunker import chunk_text

__all__ = [
    "MAX_MAX_TOKENS",
    "MIN_MAX_TOKENS",
    "CountTokens",
    "chunk_document",
    "chunk_markdown",
    "chunk_text",
]
