"""Lexical (BM25) retrieval over chunk text with Tantivy."""

from __future__ import annotations

from core.lexical.query import sanitize_query
from core.lexical.tantivy_index import LexicalSettings, TantivyIndex

__all__ = ["LexicalSettings", "TantivyIndex", "sanitize_query"]
