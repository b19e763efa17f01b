"""Runs one grpc.aio call: API key metadata, the deadline, retries, errors as GroundwireError."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import grpc

from groundwire.deadline import Deadline
from groundwire.errors import GroundwireError, error_from_rpc
from groundwire.retry import RetryPolicy

R = TypeVar("R")
Metadata = tuple[tuple[str, str], ...]


class AsyncInvoker:
    """Awaits stub methods with the connection's metadata under one deadline and retry policy."""

    def __init__(self, metadata: Metadata, retry: RetryPolicy, timeout_s: float | None) -> None:
        self._metadata = metadata
        self.retry = retry
        self.timeout_s = timeout_s
        """Deadline of calls that give none, seconds (None: no deadline)."""

    def deadline(self, timeout_s: float | None) -> Deadline:
        """The deadline of a call given `timeout_s` (None: the client's default)."""
        return Deadline(self.timeout_s if timeout_s is None else timeout_s)

    async def unary(
        self, method: Callable[..., Awaitable[R]], request: Any, timeout_s: float | None
    ) -> R:
        """A unary call, retried as the policy says."""
        return await self._attempts(
            lambda remaining: self._call(method, request, remaining), timeout_s
        )

    async def client_stream(
        self, method: Callable[..., Awaitable[R]], requests: Sequence[Any], timeout_s: float | None
    ) -> R:
        """A client-streaming call of the given messages, re-sent whole on a retry."""
        return await self._attempts(
            lambda remaining: self._call(method, iter(requests), remaining), timeout_s
        )

    async def server_stream(
        self,
        method: Callable[..., Any],
        request: Any,
        timeout_s: float | None,
        on_call: Callable[[grpc.aio.Call], None],
    ) -> AsyncIterator[Any]:
        """The responses of a server-streaming call; retried only until the first one arrives.

        `on_call` receives each attempt's call object (to cancel it).
        """
        deadline = self.deadline(timeout_s)
        attempt = 1
        while True:
            call = method(request, timeout=deadline.remaining(), metadata=self._metadata)
            on_call(call)
            received = False
            try:
                async for response in call:
                    received = True
                    yield response
                return
            except grpc.RpcError as exc:
                error = error_from_rpc(exc)
            delay = None if received else self.retry.delay_before_retry(error, attempt)
            if delay is None or not deadline.allows_wait(delay):
                raise error
            await asyncio.sleep(delay)
            attempt += 1

    async def _call(
        self, method: Callable[..., Awaitable[R]], request: Any, remaining: float | None
    ) -> R:
        return await method(request, timeout=remaining, metadata=self._metadata)

    async def _attempts(
        self, attempt_once: Callable[[float | None], Awaitable[R]], timeout_s: float | None
    ) -> R:
        deadline = self.deadline(timeout_s)
        attempt = 1
        while True:
            try:
                return await attempt_once(deadline.remaining())
            except grpc.RpcError as exc:
                error: GroundwireError = error_from_rpc(exc)
            delay = self.retry.delay_before_retry(error, attempt)
            if delay is None or not deadline.allows_wait(delay):
                raise error
            await asyncio.sleep(delay)
            attempt += 1
