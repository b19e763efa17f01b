"""The embedding model interface every backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import torch


@runtime_checkable
class Embedder(Protocol):
    """A text embedding model; implementations are safe to call from several threads."""

    model_name: str
    """A readable model identifier (a path or a hub name)."""
    dimension: int
    """Length of every embedding vector."""
    max_tokens: int
    """Tokens of content (special tokens excluded) the model reads per text; more is truncated."""
    device: str
    """Torch device the model runs on, for example "cpu" or "cuda:0"."""
    additive_token_counts: bool
    """Whether `count_tokens(a + whitespace + b) == count_tokens(a) + count_tokens(b)` provably
    holds (see core.embed.token_additivity); context assembly then sums sizes."""

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embeddings of passages to index: float32, (len(texts), dimension), L2-normalised."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embeddings of search queries: float32, shape (len(texts), dimension), L2-normalised."""
        ...

    def count_tokens(self, text: str) -> int:
        """Number of tokenizer tokens in `text`, special tokens excluded."""
        ...


@runtime_checkable
class TensorQueryEmbedder(Protocol):
    """An embedder that can leave query vectors on its torch device (no host round trip)."""

    def embed_queries_tensor(self, texts: Sequence[str]) -> torch.Tensor:
        """Query embeddings on the model's device: (len(texts), dimension), L2-normalised."""
        ...


@runtime_checkable
class AsyncQueryEmbedder(Protocol):
    """An embedder a coroutine can await for query vectors without holding a thread meanwhile."""

    async def embed_queries_async(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embeddings of search queries, as `Embedder.embed_queries`."""
        ...
