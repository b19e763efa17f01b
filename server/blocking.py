"""Run blocking core work off the event loop, honouring the caller's deadline.

The work runs in a copy of the caller's context, so the request id, the current span and the
telemetry sink follow it onto the worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

import grpc

from core.observe.tracing import in_this_context

T = TypeVar("T")


async def run_blocking(
    context: grpc.aio.ServicerContext[Any, Any],
    executor: Executor,
    fn: Callable[..., T],
    *args: Any,
) -> T:
    """Run `fn(*args)` on `executor`; DEADLINE_EXCEEDED if the deadline has already passed."""
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        await context.abort(
            grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline expired before work started"
        )
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, in_this_context(fn, *args))
