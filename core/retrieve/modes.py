"""Which retrievers a query runs."""

from __future__ import annotations

from enum import Enum


class RetrievalMode(str, Enum):
    """Dense only, lexical only, or both fused."""

    DENSE = "dense"
    LEXICAL = "lexical"
    HYBRID = "hybrid"
