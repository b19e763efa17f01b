"""A search a request has asked for and reads later: started on a pool, or run when read.

A remote lexical search (Milvus) waits on the network, so it starts on a pool as soon as the query
text is known and overlaps the embedding and the dense search. A local one (Tantivy) costs
~0.3-0.6 ms of CPU: handing it to another thread costs more than it saves once the cores are busy
(a wake-up, a second thread contending for the GIL, the result handed back), so it runs on the
thread that first needs its result (benchmarks/results/ghz_lexical_inline.md). Both look alike to
the pipeline: `result()` gives the ranking, `cancel()` drops one that is no longer wanted.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class PendingSearch(Protocol[T_co]):
    """A search whose result is read later (`concurrent.futures.Future` is one)."""

    def result(self) -> T_co:
        """The search's result, waiting for it (or running it) if need be."""
        ...

    def cancel(self) -> bool:
        """Drop the search if it has not started; whether it was dropped."""
        ...


class RunWhenRead(Generic[T]):
    """A search run by the first `result()` call, on that thread; later calls return the same
    result (or raise the same error). `cancel()` before it ran means it never runs. Not
    thread-safe: one request's thread reads it (the pipeline hands it from `_begin` to
    `_finish`, one after the other)."""

    __slots__ = ("_search", "_done", "_value", "_error")

    def __init__(self, search: Callable[[], T]) -> None:
        self._search: Callable[[], T] | None = search
        self._done = False
        self._value: T | None = None
        self._error: BaseException | None = None

    def result(self) -> T:
        if not self._done:
            search = self._search
            if search is None:
                raise RuntimeError("the search was cancelled before it ran")
            self._search, self._done = None, True
            try:
                self._value = search()
            except BaseException as exc:
                self._error = exc
                raise
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def cancel(self) -> bool:
        if self._done:
            return False
        self._search = None
        return True


def start_search(search: Callable[[], T], remote: bool, pool: Executor) -> PendingSearch[T]:
    """`search` started on `pool` when it waits on another server (`remote`), else run when
    its result is first read."""
    if remote:
        future: Future[T] = pool.submit(search)
        return future
    return RunWhenRead(search)
