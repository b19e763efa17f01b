"""`PeerContext`: the servicer context of a call another process of the server handed to this one
(server/peer_calls.py), standing in for grpc's so the very same handlers serve it.

It offers what the handlers, servicers and the telemetry interceptor use: the caller's metadata,
the time left before the caller's deadline, `abort` (which records the status and raises grpc's
AbortError, as grpc's context does), trailing metadata, the status code, and a peer address in
the "unix:" form of the server's private sockets (server/process_role.py), so the call is
traced here but counted only where it arrived.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import grpc

from server.process_role import PRIVATE_PEER

Metadata = tuple[tuple[str, str | bytes], ...]


class PeerContext:
    """The context of one handed-over call: `metadata` the caller's, `timeout_s` the seconds its
    deadline left when the other process handed it over (None: no deadline)."""

    def __init__(self, metadata: Metadata, timeout_s: float | None) -> None:
        self._metadata = metadata
        self._deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self._code: grpc.StatusCode | None = None
        self._details = ""
        self._trailing: Metadata = ()

    def invocation_metadata(self) -> Metadata:
        """The caller's metadata."""
        return self._metadata

    def time_remaining(self) -> float | None:
        """Seconds left before the caller's deadline (None without one)."""
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    def peer(self) -> str:
        """The private-socket form: the call came from another process of the server."""
        return PRIVATE_PEER

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Sequence[Any] = ()
    ) -> None:
        """End the call with `code`: records the status and raises grpc.aio.AbortError."""
        self._code, self._details = code, details
        if trailing_metadata:
            self._trailing = tuple(trailing_metadata)
        raise grpc.aio.AbortError(f"{code.name}: {details}")

    def set_trailing_metadata(self, trailing_metadata: Sequence[Any]) -> None:
        """The metadata sent with the call's status."""
        self._trailing = tuple(trailing_metadata)

    def code(self) -> grpc.StatusCode | None:
        """The code `abort` ended the call with (None until then)."""
        return self._code

    def status(self) -> tuple[grpc.StatusCode, str, Metadata]:
        """(code, details, trailing metadata) to end the caller's call with: OK unless aborted."""
        return self._code or grpc.StatusCode.OK, self._details, self._trailing
