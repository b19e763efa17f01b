"""`QueryEmbeddingCache`: an `Embedder` that remembers query embeddings for a while.

Only query embeddings are cached, keyed by (model identity, whitespace-normalised text; see
`model_identity` and `cache_text_key`), so caches sharing one map over several models (a
per-collection tuned model beside the served one) never hand out another model's vector; documents
and token counts go straight to the wrapped embedder. A batch with some cached and some new
queries embeds the new ones in one inner call. `embed_queries_tensor_with_hits` serves a GPU
search engine: new queries are embedded on the model's device and cached there, so a vector
never crosses to the host on its way to the search. Not to be confused with
`core.embed.cached_embedder.CachedEmbedder`, the persistent document-vector cache of eval.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import numpy.typing as npt

from core.cache.fingerprint import cache_text_key
from core.cache.lru_ttl import CacheStats, Clock, LruTtlMap
from core.embed.embedder_identity import EmbedderIdentity
from core.embed.protocol import AsyncQueryEmbedder, Embedder, TensorQueryEmbedder
from core.embed.torch_tensors import host_float32, is_tensor

if TYPE_CHECKING:  # torch is imported only on the tensor path (a GPU model's)
    import torch

FloatArray = npt.NDArray[np.float32]
Vector: TypeAlias = "FloatArray | torch.Tensor"
"""A cached row: a read-only float32 host array, or a (d,) tensor on the model's device."""

DEFAULT_TTL_S = 600.0
DEFAULT_MAX_ENTRIES = 10_000

Key = tuple[str, str]
"""(model identity, normalised query text)."""


def model_identity(embedder: Embedder) -> str:
    """What makes `embedder`'s vectors its own: its `model_identity` attribute when it has one
    (e.g. a digest of tuned weights), else its model name and dimension."""
    declared = getattr(embedder, "model_identity", None)
    if isinstance(declared, str) and declared:
        return declared
    return f"{embedder.model_name}#{embedder.dimension}"


class QueryEmbeddingCache(EmbedderIdentity):
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
        shared: LruTtlMap[Key, Vector] | None = None,
    ) -> None:
        """`shared`: the map of another cache (see `for_embedder`); ttl and size are then its."""
        self._inner = inner
        self._normalize = normalize
        self._map: LruTtlMap[Key, Vector] = (
            shared if shared is not None else LruTtlMap(max_entries, ttl_s, clock)
        )
        self._take_identity(inner)

    def for_embedder(self, inner: Embedder) -> QueryEmbeddingCache:
        """A cache in front of another model sharing this one's entries, bound and counters;
        each model only ever gets its own vectors back."""
        return QueryEmbeddingCache(inner, normalize=self._normalize, shared=self._map)

    def _keys(self, texts: Sequence[str]) -> list[Key]:
        identity = model_identity(self._inner)  # read per call: a reloaded model gets new keys
        return [(identity, self._normalize(text)) for text in texts]

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
        result, hits, missing = self._lookup(texts)
        if missing:
            self._store(result, missing, self._embed_missing(list(missing)))
        return result, hits

    async def embed_queries_async(self, texts: Sequence[str]) -> FloatArray:
        """`embed_queries` for a coroutine (see `embed_queries_with_hits_async`)."""
        return (await self.embed_queries_with_hits_async(texts))[0]

    async def embed_queries_with_hits_async(
        self, texts: Sequence[str]
    ) -> tuple[FloatArray, list[bool]]:
        """`embed_queries_with_hits` awaited: misses go to the inner `embed_queries_async` when
        it has one (no thread waits meanwhile), else to its blocking `embed_queries` on a thread."""
        result, hits, missing = self._lookup(texts)
        if missing:
            inner = self._inner
            texts_missing = [text for _, text in missing]
            if isinstance(inner, AsyncQueryEmbedder):
                fresh = await inner.embed_queries_async(texts_missing)
            else:
                fresh = await asyncio.to_thread(inner.embed_queries, texts_missing)
            vectors = np.asarray(fresh, dtype=np.float32)
            _check_shape(vectors.shape, (len(missing), self.dimension))
            self._store(result, missing, vectors)
        return result, hits

    def _lookup(self, texts: Sequence[str]) -> tuple[FloatArray, list[bool], dict[Key, list[int]]]:
        """The rows found in the cache, filled into a new (len(texts), d) array; per text
        whether it was found; the missing keys with the rows each fills."""
        keys = self._keys(texts)
        result = np.empty((len(keys), self.dimension), dtype=np.float32)
        hits = [False] * len(keys)
        missing: dict[Key, list[int]] = {}
        for row, key in enumerate(keys):
            cached = self._map.get(key)
            if cached is None:
                missing.setdefault(key, []).append(row)
            else:
                result[row] = host_float32(cached)
                hits[row] = True
        return result, hits, missing

    def _store(self, result: FloatArray, missing: dict[Key, list[int]], fresh: FloatArray) -> None:
        """Cache each fresh vector (read-only) and fill its rows of `result`."""
        for vector, (key, rows) in zip(fresh, missing.items(), strict=True):
            stored = vector.copy()
            stored.setflags(write=False)
            self._map.put(key, stored)
            result[rows] = stored

    def embed_queries_tensor_with_hits(
        self, texts: Sequence[str]
    ) -> tuple[torch.Tensor, list[bool]]:
        """Query embeddings as one tensor on the inner model's device ((len(texts), d), the
        model's dtype) and, per text, whether it came from the cache.

        Misses are embedded with the inner `embed_queries_tensor` (one call) and cached on the
        device; rows cached as host arrays are uploaded. Falls back to `embed_queries_with_hits`
        (a float32 CPU tensor) when the inner embedder has no tensor path.
        """
        import torch

        inner = self._inner
        if not isinstance(inner, TensorQueryEmbedder):
            host_vectors, host_hits = self.embed_queries_with_hits(texts)
            return torch.from_numpy(host_vectors), host_hits
        keys = self._keys(texts)
        rows: list[Vector | None] = [self._map.get(key) for key in keys]
        hits = [row is not None for row in rows]
        missing = list(
            dict.fromkeys(key for key, row in zip(keys, rows, strict=True) if row is None)
        )
        fresh: dict[Key, torch.Tensor] = {}
        if missing:
            vectors = inner.embed_queries_tensor([text for _, text in missing])
            _check_shape(tuple(vectors.shape), (len(missing), self.dimension))
            for key, vector in zip(missing, vectors, strict=True):
                fresh[key] = vector.clone()  # its own storage: the batch tensor may be large
                self._map.put(key, fresh[key])
        device_rows = [
            fresh[key] if row is None else row for key, row in zip(keys, rows, strict=True)
        ]
        reference = next((r for r in device_rows if is_tensor(r)), None)
        if reference is None:  # every row was cached on the host
            return torch.from_numpy(np.stack([host_float32(r) for r in device_rows])), hits
        return torch.stack([_on_device(r, reference) for r in device_rows]), hits

    def stats(self) -> CacheStats:
        """Hits and misses (one per text looked up), evictions, expirations and entries."""
        return self._map.stats()

    def clear(self) -> int:
        """Drop every cached embedding and reset the counters; the number of entries removed."""
        return self._map.clear()

    def _embed_missing(self, keys: list[Key]) -> FloatArray:
        texts = [text for _, text in keys]
        vectors = np.asarray(self._inner.embed_queries(texts), dtype=np.float32)
        _check_shape(vectors.shape, (len(keys), self.dimension))
        return vectors


def _check_shape(shape: tuple[int, ...], expected: tuple[int, int]) -> None:
    if shape != expected:
        raise RuntimeError(f"inner embedder returned shape {shape}, expected {expected}")


def _on_device(vector: Vector, like: torch.Tensor) -> torch.Tensor:
    """A cached row as a tensor on `like`'s device and dtype."""
    import torch

    if isinstance(vector, torch.Tensor):
        return vector.to(device=like.device, dtype=like.dtype)
    return torch.from_numpy(vector.copy()).to(device=like.device, dtype=like.dtype)
