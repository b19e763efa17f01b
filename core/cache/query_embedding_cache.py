"""`QueryEmbeddingCache`: an `Embedder` that remembers query embeddings for a while.

Only `embed_queries` is cached (per whitespace-normalised text, see `cache_text_key`); documents
and token counts go straight to the wrapped embedder. A batch with some cached and some new
queries embeds the new ones in one inner call. Not to be confused with
`core.embed.cached_embedder.CachedEmbedder`, the persistent document-vector cache of eval.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from core.cache.fingerprint import cache_text_key
from core.cache.lru_ttl import CacheStats, Clock, LruTtlMap
from core.embed.protocol import Embedder

FloatArray = npt.NDArray[np.float32]

DEFAULT_TTL_S = 600.0
DEFAULT_MAX_ENTRIES = 10_000


class QueryEmbeddingCache:
    """An `Embedder` wrapping `inner`, with an LRU + TTL cache in front of `embed_queries`.

    The text sent to `inner` is the normalised key, so a cached row is always exactly what
    `inner` returns for that key. Thread-safe when `inner` is; two threads missing the same
    query at once may both embed it (the later result wins, both are identical).
    """

    def __init__(
        self,
        inner: Embedder,
        ttl_s: float = DEFAULT_TTL_S,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Clock = time.monotonic,
        normalize: Callable[[str], str] = cache_text_key,
    ) -> None:
        self._inner = inner
        self._normalize = normalize
        self._map: LruTtlMap[str, FloatArray] = LruTtlMap(max_entries, ttl_s, clock)
        self.model_name = inner.model_name
        self.dimension = inner.dimension
        self.max_tokens = inner.max_tokens
        self.device = inner.device

    @property
    def inner(self) -> Embedder:
        """The wrapped embedder."""
        return self._inner

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        """Embeddings of passages, straight from the inner embedder (never cached)."""
        return self._inner.embed_documents(texts)

    def count_tokens(self, text: str) -> int:
        """Token count from the inner embedder."""
        return self._inner.count_tokens(text)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        """Query embeddings: float32, (len(texts), dimension), L2-normalised; a new array."""
        return self.embed_queries_with_hits(texts)[0]

    def embed_queries_with_hits(self, texts: Sequence[str]) -> tuple[FloatArray, list[bool]]:
        """Query embeddings (as `embed_queries`) and, per text, whether it came from the cache.

        The misses are embedded in one inner call, each distinct key once. The returned array
        is new: writing to it never changes what the cache holds.
        """
        keys = [self._normalize(text) for text in texts]
        result = np.empty((len(keys), self.dimension), dtype=np.float32)
        hits = [False] * len(keys)
        missing: dict[str, list[int]] = {}
        for row, key in enumerate(keys):
            cached = self._map.get(key)
            if cached is None:
                missing.setdefault(key, []).append(row)
            else:
                result[row] = cached
                hits[row] = True
        if missing:
            fresh = self._embed_missing(list(missing))
            for vector, (key, rows) in zip(fresh, missing.items(), strict=True):
                stored = vector.copy()
                stored.setflags(write=False)
                self._map.put(key, stored)
                result[rows] = stored
        return result, hits

    def stats(self) -> CacheStats:
        """Hits and misses (one per text looked up), evictions, expirations and entries."""
        return self._map.stats()

    def clear(self) -> int:
        """Drop every cached embedding and reset the counters; the number of entries removed."""
        return self._map.clear()

    def _embed_missing(self, keys: list[str]) -> FloatArray:
        vectors = np.asarray(self._inner.embed_queries(keys), dtype=np.float32)
        expected = (len(keys), self.dimension)
        if vectors.shape != expected:
            raise RuntimeError(
                f"inner embedder returned shape {vectors.shape}, expected {expected}"
            )
        return vectors
