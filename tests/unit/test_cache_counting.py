"""`summed` adds the cache counters of several processes and counts the processes."""

from __future__ import annotations

from server.cache_counting import CacheCounts, summed


def test_counters_of_several_processes_add_up() -> None:
    primary = CacheCounts(1, 2, 3, 4, 5)
    reader = CacheCounts(10, 20, 30, 40, 50)
    assert summed([primary, reader]) == CacheCounts(11, 22, 33, 44, 55, processes=2)
    assert summed([primary]) == primary
    assert primary.fields() == (1, 2, 3, 4, 5)
