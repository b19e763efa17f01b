"""`LruTtlMap`: a thread-safe map bounded by entry count (least recently used goes first) and age.

Every entry expires `ttl_s` seconds after it was stored, measured with an injectable monotonic
clock so tests can move time without sleeping. Counters (hits, misses, capacity evictions, TTL
expirations) describe the map since construction or the last `clear()`.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

Clock = Callable[[], float]
"""Seconds from an arbitrary origin that never go backwards (like `time.monotonic`)."""


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counters since construction or the last `clear()`, and entries held now."""

    hits: int
    misses: int
    evictions: int
    """Entries dropped to make room (least recently used first)."""
    expirations: int
    """Entries dropped because they outlived the TTL."""
    entries: int


@dataclass(frozen=True, slots=True)
class _Entry(Generic[V]):
    value: V
    expires_at: float


class LruTtlMap(Generic[K, V]):
    """A bounded key-value map: at most `max_entries`, each living at most `ttl_s` seconds.

    `get` refreshes recency but not age: an entry expires `ttl_s` after its last `put`, however
    often it is read. Values are returned as stored; store immutable values (or copies).
    """

    def __init__(self, max_entries: int, ttl_s: float, clock: Clock = time.monotonic) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        if not ttl_s > 0:  # also rejects NaN; math.inf means entries never expire
            raise ValueError(f"ttl_s must be > 0, got {ttl_s}")
        self._max_entries = max_entries
        self._ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[K, _Entry[V]] = OrderedDict()
        self._hits = 0
        self._misses = 0
        self._evictions = 0
        self._expirations = 0

    def get(self, key: K, accept: Callable[[V], bool] | None = None) -> V | None:
        """The live value under `key`, or None (a miss).

        When `accept` is given and returns False for the stored value, the entry is removed and
        the lookup counts as a miss (used for values that went stale for reasons other than age).
        """
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and self._clock() >= entry.expires_at:
                del self._entries[key]
                self._expirations += 1
                entry = None
            if entry is not None and accept is not None and not accept(entry.value):
                del self._entries[key]
                entry = None
            if entry is None:
                self._misses += 1
                return None
            self._entries.move_to_end(key)
            self._hits += 1
            return entry.value

    def put(self, key: K, value: V) -> None:
        """Store `value` under `key` as the most recently used entry, evicting the least recent
        entries beyond capacity."""
        with self._lock:
            self._entries[key] = _Entry(value, self._clock() + self._ttl_s)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
                self._evictions += 1

    def discard(self, key: K) -> bool:
        """Remove `key`; True when it was present."""
        with self._lock:
            return self._entries.pop(key, None) is not None

    def remove_where(self, predicate: Callable[[K], bool]) -> int:
        """Remove every live entry whose key satisfies `predicate`; the number removed.

        Expired entries met on the way are dropped too (counted as expirations, not returned).
        """
        with self._lock:
            self._purge_expired_locked()
            doomed = [key for key in self._entries if predicate(key)]
            for key in doomed:
                del self._entries[key]
            return len(doomed)

    def keys(self) -> list[K]:
        """Keys of the live entries, least recently used first (a snapshot)."""
        with self._lock:
            self._purge_expired_locked()
            return list(self._entries)

    def clear(self) -> int:
        """Remove every entry and reset the counters; the number of live entries removed."""
        with self._lock:
            self._purge_expired_locked()
            removed = len(self._entries)
            self._entries.clear()
            self._hits = self._misses = self._evictions = self._expirations = 0
            return removed

    def stats(self) -> CacheStats:
        """A snapshot of the counters; expired entries are dropped first so `entries` is exact."""
        with self._lock:
            self._purge_expired_locked()
            return CacheStats(
                hits=self._hits,
                misses=self._misses,
                evictions=self._evictions,
                expirations=self._expirations,
                entries=len(self._entries),
            )

    def __len__(self) -> int:
        """Entries held, including any that expired but were not yet dropped."""
        with self._lock:
            return len(self._entries)

    def _purge_expired_locked(self) -> None:
        now = self._clock()
        expired = [key for key, entry in self._entries.items() if now >= entry.expires_at]
        for key in expired:
            del self._entries[key]
        self._expirations += len(expired)
