"""The event loop a server process runs on: uvloop (the default) or asyncio's own
(`server.event_loop`).

grpc.aio runs on any asyncio loop. A Retrieve completes on other threads several times (its
stages, its lexical search, its embedding batch), each waking the loop; uvloop does the loop's
work in C (libuv). Measured against asyncio's loop (README, "Processes"): more calls per second
at 32 clients, no difference to speak of at 8, where the loop's own work is small.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

LOOPS = ("asyncio", "uvloop")


def loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory of the loop named `choice` (None: asyncio's default); ValueError for a name
    not in `LOOPS`."""
    if choice == "asyncio":
        return None
    if choice == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    raise ValueError(f"server.event_loop must be one of {', '.join(LOOPS)}, got {choice!r}")


def run(main: Coroutine[Any, Any, T], choice: str) -> T:
    """`asyncio.run(main)` on the loop named `choice`."""
    with asyncio.Runner(loop_factory=loop_factory(choice)) as runner:
        return runner.run(main)
