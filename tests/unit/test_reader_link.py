"""`ReaderLink.ask` over a real multiprocessing Pipe, a thread playing the reader: an answer is
returned, a late one is given up on within the timeout and dropped before the next request's
answer is read, a closed link and a mismatched answer are reported."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

import pytest

from server.reader_link import NoAnswer, ReaderLink


def _answer(link: Connection, delays_s: list[float]) -> None:
    """A reader answering each request ("cache_stats", id, ...) with ("cache_stats", id, id),
    the n-th after `delays_s[n]` seconds."""
    for delay_s in delays_s:
        request = link.recv()
        time.sleep(delay_s)
        link.send(("cache_stats", request[1], request[1]))


@pytest.fixture
def pipe() -> Iterator[tuple[Connection, Connection]]:
    ours, theirs = multiprocessing.Pipe()
    yield ours, theirs
    ours.close()
    theirs.close()


def _reader(link: Connection, delays_s: list[float]) -> threading.Thread:
    thread = threading.Thread(target=_answer, args=(link, delays_s), daemon=True)
    thread.start()
    return thread


def _ask(link: ReaderLink, request_id: int, timeout_s: float) -> Any:
    request = ("cache_stats", request_id, "acme", "notes")
    return link.ask(request, "cache_stats", timeout_s, "counting")


def test_an_answer_in_time_is_returned(pipe: tuple[Connection, Connection]) -> None:
    ours, theirs = pipe
    thread = _reader(theirs, [0.0, 0.0])

    async def scenario() -> list[tuple[Any, ...]]:
        link = ReaderLink(ours)
        return [await _ask(link, 1, 5.0), await _ask(link, 2, 5.0)]

    assert asyncio.run(scenario()) == [(1,), (2,)]
    thread.join(5)


def test_a_late_answer_is_given_up_on_then_dropped_before_the_next(
    pipe: tuple[Connection, Connection],
) -> None:
    ours, theirs = pipe
    thread = _reader(theirs, [0.5, 0.0])

    async def scenario() -> tuple[str, tuple[Any, ...]]:
        link = ReaderLink(ours)
        with pytest.raises(NoAnswer) as late:  # raised, not request 1's answer returned
            await _ask(link, 1, 0.2)
        # the reader answers request 1 after 0.5 s, then request 2: only 2's answer is returned
        return str(late.value), await _ask(link, 2, 5.0)

    message, answer = asyncio.run(scenario())
    assert message == "did not answer within 0.2 s"
    assert answer == (2,)
    thread.join(5)


def test_a_reader_that_exits_is_reported(pipe: tuple[Connection, Connection]) -> None:
    ours, theirs = pipe

    def exit_unanswered() -> None:
        theirs.recv()
        theirs.close()

    thread = threading.Thread(target=exit_unanswered, daemon=True)
    thread.start()

    async def scenario() -> tuple[str, str]:
        link = ReaderLink(ours)
        messages = []
        for request_id in (1, 2):  # exits while asked; is still gone when asked again
            with pytest.raises(NoAnswer) as gone:
                await _ask(link, request_id, 5.0)
            messages.append(str(gone.value))
        return messages[0], messages[1]

    asked, after = asyncio.run(scenario())
    assert asked == "exited while counting"
    assert after == "exited while counting"
    thread.join(5)


def test_an_answer_to_another_request_is_an_error(pipe: tuple[Connection, Connection]) -> None:
    ours, theirs = pipe

    def answer_wrongly() -> None:
        request = theirs.recv()
        theirs.send(("cleared", request[1], 0, 0))

    thread = threading.Thread(target=answer_wrongly, daemon=True)
    thread.start()

    async def scenario() -> None:
        await _ask(ReaderLink(ours), 7, 5.0)

    with pytest.raises(RuntimeError) as wrong:
        asyncio.run(scenario())
    assert str(wrong.value) == "asked 'cache_stats' (id 7); answered ('cleared', 7, 0, 0)"
    thread.join(5)


def test_a_link_closed_while_a_request_waits_leaves_its_descriptor_number_to_a_new_link() -> None:
    """The supervisor closes a dead reader's link and at once opens the restarted reader's,
    whose pipe the kernel gives the lowest free descriptor: the number the old link just freed.
    A request still waiting on the old link must end ("exited") and leave the event loop's
    watch on that number, or the new link is never watched and the restarted reader's "ready"
    is never read (the primary then waits for it forever)."""
    old_ours, old_theirs = multiprocessing.Pipe()

    async def scenario() -> tuple[str, Any]:
        old = ReaderLink(old_ours)
        asking = asyncio.create_task(_ask(old, 1, 5.0))
        await asyncio.sleep(0.05)  # sent; its answer is awaited on the old descriptor
        freed = old_ours.fileno()
        old.close()  # the reader died: the supervisor closes its link
        new_ours, new_theirs = multiprocessing.Pipe()
        try:
            assert freed in (new_ours.fileno(), new_theirs.fileno())
            new = ReaderLink(new_ours)
            new_theirs.send(("ready", 42, 0))
            first = await asyncio.wait_for(new.receive(), 2.0)
            with pytest.raises(NoAnswer) as gone:
                await asking
            return str(gone.value), first
        finally:
            new_ours.close()
            new_theirs.close()

    try:
        assert asyncio.run(scenario()) == ("exited while counting", ("ready", 42, 0))
    finally:
        old_theirs.close()


def test_receive_on_a_closed_link_is_none(pipe: tuple[Connection, Connection]) -> None:
    ours, theirs = pipe

    async def scenario() -> Any:
        link = ReaderLink(ours)
        link.close()
        return await link.receive()

    assert asyncio.run(scenario()) is None
