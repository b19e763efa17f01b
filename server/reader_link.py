"""The primary's end of one reader's link: a request sent, its answer awaited.

After "ready" the primary asks a reader questions over its multiprocessing link (clear your
caches, count your caches: server/cache_clearing.py, server/cache_counting.py). Every request is
a tuple (kind, id, ...) and its answer (answer kind, the same id, ...). One request is in flight
at a time: the answer to one that timed out is read (and dropped) before the next is sent, so a
reader that was slow never fills the link's buffer nor has its stale answer taken for the next.

A link is closed through `close` on the event loop's thread, never by closing its connection
directly: the loop watches a descriptor by number, and a closed number is the next pipe's (a
restarted reader's link). `close` takes a waiting `receive` off the loop first and ends it with
None, so a new link on the same number is watched afresh.
"""

from __future__ import annotations

import asyncio
from multiprocessing.connection import Connection
from typing import Any


class NoAnswer(Exception):
    """The reader gave no answer: the message says why (it exited, is unreachable, timed out)."""


class ReaderLink:
    """Requests over `connection`, one at a time, each answered or given up on."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._asking = asyncio.Lock()
        """Held while a request awaits its answer."""
        self._unanswered = 0
        """Requests sent whose answer has not been read (0 or 1)."""
        self._waiting: asyncio.Future[None] | None = None
        """Set while `receive` waits for the descriptor to become readable."""

    async def receive(self) -> Any:
        """The reader's next message, or None when it exited or the link was closed."""
        if self.connection.closed:
            return None
        loop = asyncio.get_running_loop()
        readable: asyncio.Future[None] = loop.create_future()
        descriptor = self.connection.fileno()
        loop.add_reader(descriptor, _settle, readable)
        self._waiting = readable
        try:
            await readable
        finally:
            self._waiting = None
            if not self.connection.closed:  # else `close` took it off the loop already
                loop.remove_reader(descriptor)
        if self.connection.closed:
            return None
        try:
            return self.connection.recv()
        except (EOFError, OSError):
            return None

    def close(self) -> None:
        """Close the link (on the event loop's thread); a waiting `receive` returns None."""
        if self.connection.closed:
            return
        if self._waiting is not None:
            asyncio.get_running_loop().remove_reader(self.connection.fileno())
            _settle(self._waiting)
        self.connection.close()

    async def ask(
        self, request: tuple[Any, ...], answer_kind: str, timeout_s: float, doing: str
    ) -> tuple[Any, ...]:
        """Send `request` (kind, id, ...) and return the answer's fields after (answer_kind,
        id); NoAnswer when none comes within `timeout_s` (waiting for an earlier request
        included) or the reader exits. `doing` names the work in messages ("clearing")."""
        try:
            async with asyncio.timeout(timeout_s):
                async with self._asking:
                    while self._unanswered:  # an earlier request's late answer: dropped
                        if await self.receive() is None:
                            raise NoAnswer(f"exited while {doing}")
                        self._unanswered -= 1
                    self.connection.send(request)
                    self._unanswered += 1
                    answer = await self.receive()
                    if answer is None:
                        raise NoAnswer(f"exited while {doing}")
                    self._unanswered -= 1
        except TimeoutError:
            raise NoAnswer(f"did not answer within {timeout_s:.1f} s") from None
        except OSError as exc:  # the link broke: it exited
            raise NoAnswer(f"unreachable ({exc})") from None
        if tuple(answer[:2]) != (answer_kind, request[1]):
            raise RuntimeError(f"asked {request[0]!r} (id {request[1]}); answered {answer!r}")
        return tuple(answer[2:])


def _settle(readable: asyncio.Future[None]) -> None:
    if not readable.done():
        readable.set_result(None)
