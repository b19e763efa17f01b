"""Combined dense searches: concurrent single-query searches of one index served by one call.

Flat combining (Hendler, Incze, Shavit, Tzafrir, SPAA 2010) over the lock that already serialises
an index's searches. A thread that wants a search queues its query. If no other thread is
combining, it becomes the combiner at once: it takes the index's lock, takes its own query and
every other one queued at that moment (up to `MAX_COMBINED_QUERIES`), searches them in one call,
hands each waiter its own row (waking it), and passes the combiner's part to the oldest query
still queued, if any. Every other thread sleeps on its own event until it has its answer or the
combiner's part. Nobody waits for a timer: a query with no company is searched alone, at once;
and a waiter whose answer is ready never queues behind the next search for the lock.

The batch is taken after the lock is acquired, so each query is answered from the index as it
stood at one moment between its call and its return, exactly as a search under the lock would
be: a swap, a replay or a delete done under the same lock is seen by all of a batch or by none.
When the combined call raises, each of its queries is searched again alone, so every waiter
gets its own result or its own exception; none is left waiting.

Never call `search` while holding the lock (the combiner of the moment may be waiting for it).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]
Results = tuple[FloatArray, IdArray]

MAX_COMBINED_QUERIES = 16
"""Most queries one combined call takes (a server process searches on `server.retrieval_threads`
threads, by default its share of the cores, and on its worker threads for multi-query Answers)."""

SearchRows = Callable[[FloatArray, Sequence[int]], list[Results]]
"""Runs under the lock: queries float32 (m, d) and each row's k -> each row's
(scores float32 (1, k), row ids int64 (1, k)), in order."""


@dataclass(eq=False, slots=True)
class _Request:
    """One queued query; `done` is set (under the lock) with its result or its error, then
    `wake` (also set to hand its thread the combiner's part)."""

    query: FloatArray
    k: int
    result: Results | None = None
    error: BaseException | None = None
    done: bool = False
    wake: threading.Event = field(default_factory=threading.Event)

    def outcome(self) -> Results:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


class SearchCombiner:
    """Single-query searches of one index, combined while one of them searches.

    `lock` is the lock every other use of the index holds (adds, removes, swaps, other
    searches); `search_rows` is called with it held. `sizes` counts the calls made by how many queries each
    took (read it for a histogram; it only grows)."""

    def __init__(
        self,
        lock: threading.RLock,
        search_rows: SearchRows,
        max_queries: int = MAX_COMBINED_QUERIES,
    ) -> None:
        if max_queries < 1:
            raise ValueError(f"max_queries must be >= 1, got {max_queries}")
        self._lock = lock
        self._search_rows = search_rows
        self._max_queries = max_queries
        self._queue: deque[_Request] = deque()
        self._queue_lock = threading.Lock()
        self._combining = False  # a thread holds the combiner's part; under _queue_lock
        self.sizes: Counter[int] = Counter()

    @property
    def waiting(self) -> int:
        """Queries queued and not yet taken by a combined call."""
        with self._queue_lock:
            return len(self._queue)

    def search(self, query: FloatArray, k: int) -> Results:
        """Top-k (scores float32 (1, k), row ids int64 (1, k)) of one float32 (1, d) query."""
        request = _Request(query, k)
        with self._queue_lock:
            self._queue.append(request)
            combiner = not self._combining
            self._combining = True
        if not combiner:
            request.wake.wait()  # answered, or handed the combiner's part
        if not request.done:
            try:
                with self._lock:
                    self._serve(self._take(request))
            finally:
                self._hand_over(request)
        return request.outcome()

    def _hand_over(self, own: _Request) -> None:
        """Pass the combiner's part to the oldest queued request, or give it up (`own` leaves
        the queue if an exception kept it from being taken)."""
        with self._queue_lock:
            if not own.done and own in self._queue:
                self._queue.remove(own)
            successor = self._queue[0] if self._queue else None
            self._combining = successor is not None
        if successor is not None:
            successor.wake.set()

    def _take(self, own: _Request) -> list[_Request]:
        """`own` first, then the oldest queued requests, up to `max_queries` in all."""
        with self._queue_lock:
            self._queue.remove(own)
            batch = [own]
            while self._queue and len(batch) < self._max_queries:
                batch.append(self._queue.popleft())
        return batch

    def _serve(self, batch: list[_Request]) -> None:
        """Search `batch` in one call (alone again on failure); settle every request."""
        self.sizes[len(batch)] += 1
        logger.debug("dense search of %d queries combined", len(batch))
        try:
            try:
                queries = np.concatenate([request.query for request in batch])
                results = self._search_rows(queries, [request.k for request in batch])
            except Exception:
                if len(batch) == 1:
                    raise
                for request in batch:  # each gets its own answer or its own error
                    self._serve_alone(request)
                return
            for request, result in zip(batch, results, strict=True):
                request.result = result
                _settle(request)
        except BaseException as error:
            for request in batch:
                if not request.done:
                    request.error = error if request is batch[0] else _copied(error)
                    _settle(request)

    def _serve_alone(self, request: _Request) -> None:
        try:
            (request.result,) = self._search_rows(request.query, [request.k])
        except Exception as error:
            request.error = error
        _settle(request)


def _settle(request: _Request) -> None:
    """Mark `request` answered and wake its thread."""
    request.done = True
    request.wake.set()


def _copied(error: BaseException) -> BaseException:
    """An exception of the same type and arguments for another thread to raise (one object
    raised in several threads would share and grow one traceback); the original as its cause."""
    try:
        copy = type(error)(*error.args)
    except Exception:  # a type whose constructor differs: wrap it
        copy = RuntimeError(f"combined dense search failed: {error!r}")
    copy.__cause__ = error
    return copy


def rows_of(results: Results, ks: Sequence[int]) -> list[Results]:
    """Row i of (scores (m, K), ids (m, K)) cut to its first ks[i] columns (K >= max(ks))."""
    scores, ids = results
    return [(scores[i : i + 1, :k].copy(), ids[i : i + 1, :k].copy()) for i, k in enumerate(ks)]


def search_with_largest_k(
    search: Callable[[FloatArray, int], Results], queries: FloatArray, ks: Sequence[int]
) -> list[Results]:
    """One call with the largest k, each row cut to its own k: for exact indexes (and IVF,
    whose probes do not depend on k), where a top-k is the prefix of any longer top-k."""
    return rows_of(search(queries, max(ks)), ks)


def search_per_k(
    search: Callable[[FloatArray, int], Results], queries: FloatArray, ks: Sequence[int]
) -> list[Results]:
    """One call per distinct k (HNSW widens its candidate list with k, so rows searched with a
    larger k could differ from their search alone)."""
    rows: list[Results | None] = [None] * len(ks)
    for k in sorted(set(ks)):
        positions = [i for i, wanted in enumerate(ks) if wanted == k]
        found = search(queries[positions], k)
        for j, position in enumerate(positions):
            rows[position] = (found[0][j : j + 1].copy(), found[1][j : j + 1].copy())
    return [row for row in rows if row is not None]
