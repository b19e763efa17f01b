"""`DelegatingEmbedder`: the base of Embedder wrappers (caches, clocks, recorders, faults).

It takes the wrapped embedder's identity (model name, dimension, token limit, device, token
additivity) and passes every call through; a wrapper overrides only the calls it changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from core.embed.embedder_identity import EmbedderIdentity
from core.embed.protocol import Embedder


class DelegatingEmbedder(EmbedderIdentity):
    """An Embedder that is `inner` in every respect until a subclass overrides a method."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._take_identity(inner)

    @property
    def inner(self) -> Embedder:
        """The wrapped embedder."""
        return self._inner

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """`inner`'s passage vectors."""
        return self._inner.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """`inner`'s query vectors."""
        return self._inner.embed_queries(texts)

    def count_tokens(self, text: str) -> int:
        """`inner`'s token count."""
        return self._inner.count_tokens(text)
