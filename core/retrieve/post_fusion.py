"""The stages after fusion: long-term memories, link-graph expansion and rerank.

Each takes the ranked hits and returns new hits plus the warnings it produced; none mutates its
inputs. The pipeline runs them in this order: memories join the ranked list, the reranker
reorders its first `rerank_window` hits, the list is cut to top_k, and expansion adds linked
chunks around what remains.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from core.catalog.collection import Collection
from core.memory.hits import memory_hits, merge_memories
from core.models import Chunk, Hit, renumbered
from core.retrieve.diversity import at_most_per_document, maximal_marginal_relevance
from core.retrieve.expansion import expand
from core.retrieve.request import RetrievalRequest
from core.retrieve.rerank import Reranker, apply_rerank, run_reranker

logger = logging.getLogger(__name__)

RERANK_UNAVAILABLE = "rerank was requested but no reranker is configured; hits are in fused order"
MEMORY_NEEDS_VECTOR = (
    "use_memory needs the query embedding, which is unavailable; memories were not searched"
)


@dataclass(frozen=True, slots=True)
class MemoryOptions:
    """How memories are scored and fused (server settings)."""

    decay_rate_per_hour: float = 0.01
    weight: float = 1.0
    min_relevance: float = 0.2


def with_memories(
    hits: Sequence[Hit],
    collection: Collection,
    request: RetrievalRequest,
    query_vector: npt.NDArray[np.float32] | None,
    keywords: Sequence[str],
    options: MemoryOptions,
    count_tokens: Callable[[str], int],
) -> tuple[list[Hit], list[str]]:
    """Fuse the collection's best memories into `hits` when the request asks for them."""
    if not request.use_memory:
        return list(hits), []
    if query_vector is None:
        return list(hits), [MEMORY_NEEDS_VECTOR]
    if collection.memory_count() == 0:
        return list(hits), []
    scored = collection.memories().search(
        query_vector,
        frozenset(keywords),
        int(time.time() * 1000),
        request.top_k,
        options.decay_rate_per_hour,
        options.min_relevance,
    )
    found = memory_hits(scored, count_tokens=count_tokens)
    merged = merge_memories(hits, found, max(len(hits), request.top_k), options.weight)
    return merged, []


def with_expansion(
    hits: Sequence[Hit],
    collection: Collection,
    request: RetrievalRequest,
    admits: Callable[[Chunk], bool],
) -> list[Hit]:
    """Linked chunks added after the (document) hits they came from, by the expansion policy.

    Memories have no graph edges: they keep their place among the hits.
    """
    if not request.expansion.enabled:
        return list(hits)
    documents = [h for h in hits if h.chunk.row_id > 0]
    expanded = expand(
        documents, collection.store.edges_from, collection.get_chunks, admits, request.expansion
    )
    if len(documents) == len(hits):
        return expanded
    linked: dict[str, list[Hit]] = {}
    for hit in expanded:
        if hit.expanded_from:
            linked.setdefault(hit.expanded_from, []).append(hit)
    merged: list[Hit] = []
    for hit in hits:
        merged.append(hit)
        if hit.chunk.row_id > 0:
            merged.extend(linked.get(hit.chunk.chunk_id, ()))
    return renumbered(merged)


def with_diversity(
    hits: Sequence[Hit], collection: Collection, request: RetrievalRequest
) -> list[Hit]:
    """The hits with at most `max_hits_per_document` per document first, then in MMR order
    when the request asks for it (`core/retrieve/diversity.py`)."""
    diverse = at_most_per_document(hits, request.max_hits_per_document)
    if request.mmr_lambda is None or request.mmr_lambda == 1.0 or not diverse:
        return diverse
    ids, found = collection.store.get_vectors([h.chunk.row_id for h in diverse])
    by_id = dict(zip(ids.tolist(), found, strict=True))
    width = found.shape[1] if len(found) else 1
    zero = np.zeros(width, dtype=np.float32)  # memories: no chunk vector, never redundant
    vectors = np.stack([by_id.get(h.chunk.row_id, zero) for h in diverse])
    return maximal_marginal_relevance(diverse, vectors, request.mmr_lambda, request.top_k)


def with_rerank(
    hits: Sequence[Hit], request: RetrievalRequest, reranker: Reranker | None
) -> tuple[list[Hit], list[str]]:
    """The first `rerank_window` hits reordered by the reranker (or a warning when there is none)."""
    if not request.rerank:
        return list(hits), []
    if reranker is None:
        return list(hits), [RERANK_UNAVAILABLE]
    window = min(request.rerank_window, len(hits))
    if window == 0:
        return list(hits), []
    outcome = run_reranker(reranker, request.query, [h.chunk.text for h in hits[:window]])
    reranked = apply_rerank(hits, outcome.scores, window)
    return reranked, [outcome.warning] if outcome.warning else []
