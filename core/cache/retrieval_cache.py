"""`RetrievalCache`: retrieval results remembered per request and collection version.

A key is (tenant, collection, normalised query, fingerprint of every other request field). Each
value is stored with the `CollectionVersion` (incarnation, store sequence, memories) read
*before* it was computed, and is returned only for that exact version. Any write (upsert,
delete, compaction, added memories) moves the version forward, and dropping and re-creating a
collection or restoring a snapshot mints a new incarnation, so no caller ever invalidates by
hand and deleted content never comes back from the cache.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from core.cache.fingerprint import cache_text_key, dataclass_fingerprint
from core.cache.lru_ttl import CacheStats, Clock, LruTtlMap
from core.catalog.version import CollectionVersion

V = TypeVar("V")

DEFAULT_TTL_S = 60.0
DEFAULT_MAX_ENTRIES = 2000
SCOPE_FIELDS = ("tenant", "collection", "query")
"""Request fields that form the key directly; every other field goes into the fingerprint."""


class CacheableRequest(Protocol):
    """A frozen dataclass request (such as `RetrievalRequest`) naming its tenant and collection."""

    @property
    def query(self) -> str: ...
    @property
    def tenant(self) -> str: ...
    @property
    def collection(self) -> str: ...


@dataclass(frozen=True, slots=True)
class RetrievalKey:
    """Where a cached result belongs and which request produced it."""

    tenant: str
    collection: str
    query: str
    params: str
    """`dataclass_fingerprint` of the request without tenant, collection and query."""


@dataclass(frozen=True, slots=True)
class ScopeStats:
    """One (tenant, collection): lookups since start or its last `clear`, and entries now."""

    hits: int
    misses: int
    entries: int


@dataclass(frozen=True, slots=True)
class _Stored(Generic[V]):
    version: CollectionVersion
    value: V


@dataclass(slots=True)
class _Scope:
    hits: int = 0
    misses: int = 0
    latest: CollectionVersion | None = None  # the newest version a lookup saw


class RetrievalCache(Generic[V]):
    """An LRU + TTL cache of retrieval results, each valid for one `CollectionVersion` only.

    Values are returned as stored: cache immutable values. Nothing a collection does needs a
    call here: writes move its version forward and wholesale replacements (drop and re-create,
    restore) give it a new incarnation, which no stored entry carries.
    """

    def __init__(
        self,
        ttl_s: float = DEFAULT_TTL_S,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Clock = time.monotonic,
        normalize: Callable[[str], str] = cache_text_key,
    ) -> None:
        self._map: LruTtlMap[RetrievalKey, _Stored[V]] = LruTtlMap(max_entries, ttl_s, clock)
        self._normalize = normalize
        self._lock = threading.Lock()
        self._scopes: dict[tuple[str, str], _Scope] = {}

    def key_for(self, request: CacheableRequest) -> RetrievalKey:
        """The cache key of `request` (a dataclass instance)."""
        return RetrievalKey(
            tenant=request.tenant,
            collection=request.collection,
            query=self._normalize(request.query),
            params=dataclass_fingerprint(request, exclude=SCOPE_FIELDS),
        )

    def get(self, request: CacheableRequest, current: CollectionVersion) -> V | None:
        """The cached result of `request` if it was computed at version `current`, else None.

        A result of any other version (another incarnation, an older sequence) is dropped and
        counts as a miss.
        """
        key = self.key_for(request)
        stored = self._map.get(key, accept=lambda entry: entry.version == current)
        with self._lock:
            scope = self._scope_locked(key)
            if scope.latest is None or not current.is_older_than(scope.latest):
                scope.latest = current
            if stored is None:
                scope.misses += 1
                return None
            scope.hits += 1
            return stored.value

    def put(self, request: CacheableRequest, version: CollectionVersion, value: V) -> bool:
        """Remember `value` as the result of `request` computed at `version`.

        `version` must be read before the retrieval started. A result older than a version of
        the same incarnation a lookup has already seen is not stored (it is stale); returns
        whether the value was stored. A result of another incarnation may be stored, but only
        a lookup at exactly its version could ever get it.
        """
        key = self.key_for(request)
        with self._lock:
            scope = self._scope_locked(key)
            if scope.latest is not None and version.is_older_than(scope.latest):
                return False
            scope.latest = version
            self._map.put(key, _Stored(version, value))
        return True

    def clear(self, tenant: str, collection: str | None = None) -> int:
        """Drop the entries of one collection, or of all the tenant's collections when None,
        and reset their counters; the number of entries removed."""

        def chosen(key_tenant: str, key_collection: str) -> bool:
            return key_tenant == tenant and collection in (None, key_collection)

        with self._lock:
            for name in [name for name in self._scopes if chosen(*name)]:
                del self._scopes[name]
            return self._map.remove_where(lambda key: chosen(key.tenant, key.collection))

    def clear_all(self) -> int:
        """Drop every entry of every tenant and reset all counters; the number removed."""
        with self._lock:
            self._scopes.clear()
            return self._map.clear()

    def stats(self, tenant: str, collection: str) -> ScopeStats:
        """Hits, misses and live entries of one collection."""
        entries = sum(
            1 for key in self._map.keys() if key.tenant == tenant and key.collection == collection
        )
        with self._lock:
            scope = self._scopes.get((tenant, collection), _Scope())
            return ScopeStats(hits=scope.hits, misses=scope.misses, entries=entries)

    def totals(self) -> CacheStats:
        """Counters over every collection (since start or `clear_all`), evictions included."""
        return self._map.stats()

    def _scope_locked(self, key: RetrievalKey) -> _Scope:
        return self._scopes.setdefault((key.tenant, key.collection), _Scope())
