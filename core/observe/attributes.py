"""Span attribute names and the attribute sets of retrieval, indexing and generation spans.

Only identifiers, sizes, modes and counts: never document text, queries, prompts or keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opentelemetry.util.types import AttributeValue

if TYPE_CHECKING:  # imported for annotations only: core.embed imports this module
    from core.retrieve.request import RetrievalRequest, RetrievalResult

TENANT = "groundwire.tenant"
COLLECTION = "groundwire.collection"
MODE = "groundwire.retrieval.mode"
FUSION = "groundwire.retrieval.fusion"
TOP_K = "groundwire.retrieval.top_k"
RERANK = "groundwire.retrieval.rerank"
HITS = "groundwire.retrieval.hits"
CANDIDATES = "groundwire.retrieval.candidates"
CACHE_HIT = "groundwire.cache_hit"
EMBEDDING_CACHE_HIT = "groundwire.embed.cache_hit"
BATCH_SIZE = "groundwire.embed.batch_size"
QUEUE_WAIT_MS = "groundwire.embed.queue_wait_ms"
DEVICE = "groundwire.device"
ENGINE = "groundwire.dense.engine"
DOCUMENTS = "groundwire.index.documents"
CHUNKS = "groundwire.index.chunks"
TEXTS = "groundwire.embed.texts"
TEMPLATE = "groundwire.answer.template"
GENERATOR = "groundwire.generator"
MODEL = "gen_ai.request.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
FIRST_TOKEN_MS = "groundwire.generate.time_to_first_token_ms"
FINISH_REASON = "groundwire.generate.finish_reason"
CITATIONS = "groundwire.answer.citations"
INVALID_CITATIONS = "groundwire.answer.invalid_citations"

Attributes = dict[str, AttributeValue]


def retrieval_request(request: RetrievalRequest) -> Attributes:
    """What a retrieval was asked for (the query itself is left out)."""
    return {
        TENANT: request.tenant,
        COLLECTION: request.collection,
        MODE: request.mode.value,
        FUSION: request.fusion.value,
        TOP_K: request.top_k,
        RERANK: request.rerank,
    }


def retrieval_result(result: RetrievalResult) -> Attributes:
    """What a retrieval found."""
    return {
        MODE: result.mode.value,
        HITS: len(result.hits),
        CANDIDATES: result.total_candidates,
        CACHE_HIT: result.cache_hit,
        EMBEDDING_CACHE_HIT: result.embedding_cache_hit,
    }
