"""`LruTtlMap` semantics under a fake clock: expiry, eviction order, counters, clear."""

from __future__ import annotations

import threading

import pytest

from core.cache.lru_ttl import CacheStats, LruTtlMap


class FakeClock:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def test_entry_lives_until_ttl_then_expires(clock: FakeClock) -> None:
    cache: LruTtlMap[str, int] = LruTtlMap(max_entries=4, ttl_s=10.0, clock=clock)
    cache.put("a", 1)
    clock.advance(9.999)
    assert cache.get("a") == 1
    clock.advance(0.001)
    assert cache.get("a") is None
    assert cache.stats() == CacheStats(hits=1, misses=1, evictions=0, expirations=1, entries=0)


def test_reading_does_not_extend_life_but_put_does(clock: FakeClock) -> None:
    cache: LruTtlMap[str, int] = LruTtlMap(max_entries=4, ttl_s=10.0, clock=clock)
    cache.put("read", 1)
    cache.put("rewritten", 2)
    clock.advance(6)
    assert cache.get("read") == 1
    cache.put("rewritten", 3)
    clock.advance(6)
    assert cache.get("read") is None
    assert cache.get("rewritten") == 3


def test_least_recently_used_is_evicted_first(clock: FakeClock) -> None:
    cache: LruTtlMap[str, int] = LruTtlMap(max_entries=3, ttl_s=60.0, clock=clock)
    for value, key in enumerate("abc"):
        cache.put(key, value)
    assert cache.get("a") == 0  # a is now the most recent; b the least
    cache.put("d", 3)
    assert cache.keys() == ["c", "a", "d"]
    cache.put("e", 4)
    assert cache.keys() == ["a", "d", "e"]
    assert cache.stats().evictions == 2


def test_overwriting_a_key_refreshes_recency_without_evicting(clock: FakeClock) -> None:
    cache: LruTtlMap[str, int] = LruTtlMap(max_entries=2, ttl_s=60.0, clock=clock)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert cache.keys() == ["a", "c"]
    assert cache.get("a") == 10
    assert cache.stats().evictions == 1


def test_counters_count_hits_misses_evictions_and_expirations(clock: FakeClock) -> None:
    cache: LruTtlMap[int, str] = LruTtlMap(max_entries=2, ttl_s=5.0, clock=clock)
    assert cache.get(1) is None
    cache.put(1, "one")
    cache.put(2, "two")
    cache.put(3, "three")  # evicts 1
    assert cache.get(1) is None
    assert cache.get(2) == "two"
    assert cache.get(3) == "three"
    clock.advance(5)
    assert cache.stats() == CacheStats(hits=2, misses=2, evictions=1, expirations=2, entries=0)


def test_accept_rejecting_a_value_removes_it_and_counts_a_miss(clock: FakeClock) -> None:
    cache: LruTtlMap[str, int] = LruTtlMap(max_entries=4, ttl_s=60.0, clock=clock)
    cache.put("a", 7)
    assert cache.get("a", accept=lambda value: value == 7) == 7
    assert cache.get("a", accept=lambda value: value == 8) is None
    assert cache.get("a") is None
    assert cache.stats() == CacheStats(hits=1, misses=2, evictions=0, expirations=0, entries=0)


def test_clear_returns_live_entries_and_resets_counters(clock: FakeClock) -> None:
    cache: LruTtlMap[str, int] = LruTtlMap(max_entries=4, ttl_s=10.0, clock=clock)
    cache.put("old", 1)
    clock.advance(5)
    cache.put("new", 2)
    cache.get("new")
    clock.advance(5)  # "old" expired, "new" still live
    assert cache.clear() == 1
    assert cache.stats() == CacheStats(hits=0, misses=0, evictions=0, expirations=0, entries=0)
    assert len(cache) == 0


def test_remove_where_and_discard(clock: FakeClock) -> None:
    cache: LruTtlMap[tuple[str, int], int] = LruTtlMap(max_entries=10, ttl_s=60.0, clock=clock)
    for number in range(4):
        cache.put(("even" if number % 2 == 0 else "odd", number), number)
    assert cache.remove_where(lambda key: key[0] == "even") == 2
    assert cache.keys() == [("odd", 1), ("odd", 3)]
    assert cache.discard(("odd", 1)) is True
    assert cache.discard(("odd", 1)) is False
    assert cache.keys() == [("odd", 3)]


@pytest.mark.parametrize(
    ("max_entries", "ttl_s", "message"),
    [
        pytest.param(0, 1.0, "max_entries must be >= 1, got 0", id="no-capacity"),
        pytest.param(1, 0.0, "ttl_s must be > 0, got 0.0", id="zero-ttl"),
        pytest.param(1, float("nan"), "ttl_s must be > 0, got nan", id="nan-ttl"),
    ],
)
def test_rejects_unusable_bounds(max_entries: int, ttl_s: float, message: str) -> None:
    with pytest.raises(ValueError) as error:
        LruTtlMap(max_entries, ttl_s)
    assert str(error.value) == message


def test_infinite_ttl_never_expires(clock: FakeClock) -> None:
    cache: LruTtlMap[str, int] = LruTtlMap(max_entries=1, ttl_s=float("inf"), clock=clock)
    cache.put("a", 1)
    clock.advance(1e12)
    assert cache.get("a") == 1


def test_concurrent_puts_and_gets_keep_the_bound_and_the_counts(clock: FakeClock) -> None:
    cache: LruTtlMap[int, int] = LruTtlMap(max_entries=50, ttl_s=60.0, clock=clock)
    lookups_per_thread = 2000

    def work(offset: int) -> None:
        for number in range(lookups_per_thread):
            key = (offset + number) % 80
            if cache.get(key) is None:
                cache.put(key, key)

    threads = [threading.Thread(target=work, args=(i * 7,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stats = cache.stats()
    assert stats.entries == 50
    assert stats.hits + stats.misses == 4 * lookups_per_thread
    assert all(cache.get(key) == key for key in cache.keys())
