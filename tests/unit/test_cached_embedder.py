"""CachedEmbedder returns the inner model's vectors and computes each text once."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.embed.cached_embedder import CachedEmbedder
from core.embed.protocol import Embedder


def test_cached_vectors_equal_fresh_ones_and_survive_reopen(
    embedder: Embedder, tmp_path: Path
) -> None:
    texts = ["Strings are immutable.", "Lists are mutable.", "Strings are immutable."]
    cache = CachedEmbedder(embedder, tmp_path / "cache.sqlite")
    first = cache.embed_documents(texts)
    np.testing.assert_allclose(first, embedder.embed_documents(texts), atol=1e-6)
    assert (cache.hits, cache.misses) == (0, 3)
    cache.close()
    reopened = CachedEmbedder(embedder, tmp_path / "cache.sqlite")
    again = reopened.embed_documents(texts + ["Tuples are immutable."])
    np.testing.assert_allclose(again[:3], first, atol=0)
    assert (reopened.hits, reopened.misses) == (3, 1)
    assert reopened.embed_documents([]).shape == (0, embedder.dimension)
    reopened.close()
