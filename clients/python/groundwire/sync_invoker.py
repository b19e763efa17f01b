"""Runs one synchronous call: API key metadata, the deadline, retries, errors as GroundwireError."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import grpc

from groundwire.deadline import Deadline
from groundwire.errors import GroundwireError, error_from_rpc
from groundwire.retry import RetryPolicy

R = TypeVar("R")
Metadata = tuple[tuple[str, str], ...]


class SyncInvoker:
    """Calls stub methods with the connection's metadata under one deadline and retry policy."""

    def __init__(self, metadata: Metadata, retry: RetryPolicy, timeout_s: float | None) -> None:
        self._metadata = metadata
        self.retry = retry
        self.timeout_s = timeout_s
        """Deadline of calls that give none, seconds (None: no deadline)."""

    def deadline(self, timeout_s: float | None) -> Deadline:
        """The deadline of a call given `timeout_s` (None: the client's default)."""
        return Deadline(self.timeout_s if timeout_s is None else timeout_s)

    def unary(self, method: Callable[..., R], request: Any, timeout_s: float | None) -> R:
        """A unary call, retried as the policy says."""
        return self._attempts(lambda remaining: self._call(method, request, remaining), timeout_s)

    def client_stream(
        self, method: Callable[..., R], requests: Sequence[Any], timeout_s: float | None
    ) -> R:
        """A client-streaming call of the given messages, re-sent whole on a retry."""
        return self._attempts(
            lambda remaining: self._call(method, iter(requests), remaining), timeout_s
        )

    def server_stream(
        self,
        method: Callable[..., Any],
        request: Any,
        timeout_s: float | None,
        on_call: Callable[[grpc.Call], None],
    ) -> Iterator[Any]:
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
                for response in call:
                    received = True
                    yield response
                return
            except grpc.RpcError as exc:
                error = error_from_rpc(exc)
            delay = None if received else self.retry.delay_before_retry(error, attempt)
            if delay is None or not deadline.allows_wait(delay):
                raise error
            time.sleep(delay)
            attempt += 1

    def _call(self, method: Callable[..., R], request: Any, remaining: float | None) -> R:
        return method(request, timeout=remaining, metadata=self._metadata)

    def _attempts(self, attempt_once: Callable[[float | None], R], timeout_s: float | None) -> R:
        deadline = self.deadline(timeout_s)
        attempt = 1
        while True:
            try:
                return attempt_once(deadline.remaining())
            except grpc.RpcError as exc:
                error: GroundwireError = error_from_rpc(exc)
            delay = self.retry.delay_before_retry(error, attempt)
            if delay is None or not deadline.allows_wait(delay):
                raise error
            time.sleep(delay)
            attempt += 1
