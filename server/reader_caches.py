"""The reader processes' caches as the primary reaches them: cleared (ClearCache) and counted
(Stats), each reader over its link (server/reader_supervisor.py), each wait bounded."""

from __future__ import annotations

from typing import Protocol

from server.cache_clearing import CacheClear, ClearRequest
from server.cache_counting import CacheCounts

READER_ANSWER_S = 5.0
"""Longest wait for a reader's answer to a request on its link (clear or count its caches)."""


def reader_wait_s(time_remaining: float | None) -> float:
    """How long to wait for the readers' answers: READER_ANSWER_S, or less when the call's
    deadline (`time_remaining` seconds away, None without one) is nearer."""
    return READER_ANSWER_S if time_remaining is None else min(READER_ANSWER_S, time_remaining)


class ReaderCaches(Protocol):
    """The reader processes' caches (ReaderSupervisor)."""

    async def clear_caches(self, request: ClearRequest, timeout_s: float) -> list[CacheClear]:
        """Ask every reader to clear; one entry per reader, within about `timeout_s`."""
        ...

    async def count_caches(
        self, tenant: str, collection: str, timeout_s: float
    ) -> list[CacheCounts]:
        """Ask every reader for its counters; those of the readers that answered within about
        `timeout_s` (the others are logged and left out)."""
        ...
