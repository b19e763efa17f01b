"""The rerank stage: a Reranker Protocol, its implementations and `apply_rerank`.

Implementations are imported from their modules (`cross_encoder` needs torch and
sentence-transformers; `llm_reranker` a Generator), so importing this package stays light.
"""

from __future__ import annotations

from core.retrieve.rerank.protocol import ReportingReranker, Reranker, RerankOutcome, run_reranker
from core.retrieve.rerank.reorder import apply_rerank

__all__ = ["RerankOutcome", "Reranker", "ReportingReranker", "apply_rerank", "run_reranker"]
