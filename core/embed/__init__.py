"""Embedding models behind the `Embedder` protocol, and torch device selection.

Implementations live in their own modules (import `core.embed.sentence_transformer_embedder`
directly) so that importing the protocol does not load torch.
"""

from __future__ import annotations

from core.embed.protocol import Embedder

__all__ = ["Embedder"]
