"""Fixtures shared by the unit tests: the real embedding model (loaded once) and a word counter."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    """The bundled all-MiniLM-L6-v2 model on CPU, loaded offline once per session."""
    return SentenceTransformerEmbedder(default_model_path(), device="cpu", batch_size=8)


@pytest.fixture(scope="session")
def count_words() -> Callable[[str], int]:
    """A deterministic token counter: one token per whitespace-separated word."""
    return lambda text: len(text.split())
