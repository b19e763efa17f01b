"""The event loop a server process runs on: asyncio's own or uvloop (`server.event_loop`).

grpc.aio runs on any asyncio loop. Each Retrieve crosses threads several times (its stages, its
lexical search and its embedding batch complete on other threads and wake the loop), so the loop's
own work per call is a visible part of a served call's CPU; uvloop does that work in C (libuv).
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
