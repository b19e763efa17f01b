"""Offline evaluation: BEIR data set loading and ranking quality metrics."""

from __future__ import annotations

from core.eval.beir import BeirDataset, BeirDoc, load_beir
from core.eval.metrics import evaluate_run, mrr_at_k, ndcg_at_k, recall_at_k

__all__ = [
    "BeirDataset",
    "BeirDoc",
    "evaluate_run",
    "load_beir",
    "mrr_at_k",
    "ndcg_at_k",
    "recall_at_k",
]
