"""A retrieval's query vector: blocking (`embed_query`) or awaited (`embed_query_async`).

`QueryVector` is what the retrievers receive for one request. The awaited form lets a request
wait for a shared embedding batch on the event loop instead of parking a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.embed.protocol import AsyncQueryEmbedder, Embedder, TensorQueryEmbedder
from core.embed.torch_tensors import host_float32

if TYPE_CHECKING:  # a tensor comes only from a GPU embedder, which loaded torch
    import torch


@dataclass(frozen=True, slots=True)
class QueryVector:
    """What the retrievers receive for one request."""

    lexical_text: str
    keywords: tuple[str, ...]
    vector: np.ndarray | torch.Tensor | None  # (1, d); a tensor stays on the search device
    embedding_cache_hit: bool
    warnings: tuple[str, ...]


def embed_query(
    embedder: Embedder, query: str, on_device: bool
) -> tuple[np.ndarray | torch.Tensor, bool]:
    """The query's vector ((1, d)) and whether it came from the embedding cache.

    With `on_device`, a tensor on the model's device when the embedder can leave it there.
    """
    if on_device:
        tensor_hits = getattr(embedder, "embed_queries_tensor_with_hits", None)
        if tensor_hits is not None:
            tensor, tensor_hit = tensor_hits([query])
            return tensor, bool(tensor_hit[0])
        if isinstance(embedder, TensorQueryEmbedder):
            return embedder.embed_queries_tensor([query]), False
    with_hits = getattr(embedder, "embed_queries_with_hits", None)
    if with_hits is not None:
        vectors, hits = with_hits([query])
        return vectors, bool(hits[0])
    return embedder.embed_queries([query]), False


def awaitable(embedder: Embedder) -> bool:
    """Whether `embedder` has a host-vector path a coroutine can await (`embed_query_async`)."""
    return isinstance(embedder, AsyncQueryEmbedder)


async def embed_query_async(embedder: AsyncQueryEmbedder, query: str) -> tuple[np.ndarray, bool]:
    """The query's float32 host vector ((1, d)) and whether it came from the embedding cache,
    awaited (no thread is held while the batch runs)."""
    with_hits = getattr(embedder, "embed_queries_with_hits_async", None)
    if with_hits is not None:
        vectors, hits = await with_hits([query])
        return vectors, bool(hits[0])
    return await embedder.embed_queries_async([query]), False


def memory_row(vector: np.ndarray | torch.Tensor | None, use_memory: bool) -> np.ndarray | None:
    """The query vector as float32 (d,) host values for memory scoring (after the search)."""
    if vector is None or not use_memory:
        return None
    return host_row(vector)


def host_row(vector: np.ndarray | torch.Tensor) -> np.ndarray:
    """A (1, d) query vector as float32 (d,) host values."""
    return host_float32(vector[0])
