"""`EmbedderIdentity`: the Embedder protocol's attributes, taken over from another embedder.

Wrappers (caches, batchers, lazy loaders, runtime splits) present the model they front: the same
name (unless they say otherwise), dimension, token limit, device and token additivity. The list
of those attributes lives here once, so a new one reaches every wrapper.
"""

from __future__ import annotations

from core.embed.protocol import Embedder


class EmbedderIdentity:
    """A mixin holding the protocol's attributes; `_take_identity` copies them from `source`."""

    model_name: str
    dimension: int
    max_tokens: int
    device: str
    additive_token_counts: bool

    def _take_identity(self, source: Embedder, model_name: str | None = None) -> None:
        """Become `source` in name (or `model_name`), dimension, token limit, device and token
        additivity."""
        self.model_name = source.model_name if model_name is None else model_name
        self.dimension = source.dimension
        self.max_tokens = source.max_tokens
        self.device = source.device
        self.additive_token_counts = source.additive_token_counts
