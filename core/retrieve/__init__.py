"""Retrieval stages: fusion of ranked lists, filters, expansion, rerank and the pipeline."""

from __future__ import annotations

from core.retrieve.fusion import (
    DEFAULT_RRF_K,
    FusionMethod,
    distribution_based_fusion,
    fuse,
    max_score_fusion,
    reciprocal_rank_fusion,
    weighted_score_fusion,
)

__all__ = [
    "DEFAULT_RRF_K",
    "FusionMethod",
    "distribution_based_fusion",
    "fuse",
    "max_score_fusion",
    "reciprocal_rank_fusion",
    "weighted_score_fusion",
]
