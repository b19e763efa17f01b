"""In-process caches: a bounded LRU + TTL map, the query-embedding cache and the retrieval cache."""

from __future__ import annotations

from core.cache.fingerprint import cache_text_key, dataclass_fingerprint
from core.cache.lru_ttl import CacheStats, LruTtlMap
from core.cache.query_embedding_cache import QueryEmbeddingCache
from core.cache.retrieval_cache import RetrievalCache, RetrievalKey, ScopeStats

__all__ = [
    "CacheStats",
    "LruTtlMap",
    "QueryEmbeddingCache",
    "RetrievalCache",
    "RetrievalKey",
    "ScopeStats",
    "cache_text_key",
    "dataclass_fingerprint",
]
