"""The framed protocol one server process hands calls to another with (server/peer_calls.py), on
a real unix socket in one event loop: responses and statuses come back as the handler gave
them, the caller's metadata and deadline reach the handler, a caller that goes away cancels the
call there, and a connection that cannot be made or breaks is PeerLost, after which the next
call connects again."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from server.peer_calls import PeerCallServer, PeerChannel, PeerLost, PeerStatus
from server.peer_context import Metadata

UNARY, STREAM, SLOW, BROKEN = "/t.S/Unary", "/t.S/Stream", "/t.S/Slow", "/t.S/Broken"


class Handlers:
    """Test handlers over bytes; records what they saw and whether `Slow` was cancelled."""

    def __init__(self) -> None:
        self.seen: list[tuple[Metadata, float | None]] = []
        self.cancelled = asyncio.Event()
        self.slow_started = asyncio.Event()

    async def unary(self, request: bytes, context: Any) -> bytes:
        self.seen.append((context.invocation_metadata(), context.time_remaining()))
        if request == b"refuse":
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "say why", (("why-bin", b"\x01"),)
            )
        context.set_trailing_metadata((("done", "yes"),))
        return request.upper()

    async def stream(self, request: bytes, context: Any) -> AsyncIterator[bytes]:
        for part in request.split(b","):
            yield part
        if request.endswith(b"!"):
            await context.abort(grpc.StatusCode.UNAVAILABLE, "stopped midway")

    async def slow(self, request: bytes, context: Any) -> bytes:
        self.slow_started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return request

    async def broken(self, request: bytes, context: Any) -> bytes:
        raise RuntimeError("a bug")

    def __call__(self, method: str) -> grpc.RpcMethodHandler[Any, Any] | None:
        same: Callable[[bytes], bytes] = bytes
        unary: dict[str, Callable[[bytes, Any], Awaitable[bytes]]] = {
            UNARY: self.unary,
            SLOW: self.slow,
            BROKEN: self.broken,
        }
        if method == STREAM:
            return grpc.unary_stream_rpc_method_handler(
                self.stream, request_deserializer=same, response_serializer=same
            )
        if method in unary:
            return grpc.unary_unary_rpc_method_handler(
                unary[method], request_deserializer=same, response_serializer=same
            )
        return None


async def _collect(
    channel: PeerChannel, method: str, request: bytes, timeout_s: float | None = None
) -> tuple[list[bytes], list[Metadata]]:
    trailing: list[Metadata] = []
    responses = channel.call(method, request, (("k", "v"),), timeout_s, trailing.append)
    async with contextlib.aclosing(responses):
        return [response async for response in responses], trailing


def _run(tmp_path: Path, body: Callable[[PeerChannel, Handlers, str], Awaitable[None]]) -> None:
    async def main() -> None:
        handlers = Handlers()
        path = str(tmp_path / "peer.sock")
        server = PeerCallServer(path, handlers)
        await server.start()
        channel = PeerChannel(path)
        try:
            await body(channel, handlers, path)
        finally:
            await channel.close()
            await server.close()

    asyncio.run(main())


def test_responses_trailing_metadata_and_the_callers_metadata_and_deadline(
    tmp_path: Path,
) -> None:
    async def body(channel: PeerChannel, handlers: Handlers, _: str) -> None:
        assert await _collect(channel, UNARY, b"abc", 5.0) == ([b"ABC"], [(("done", "yes"),)])
        assert await _collect(channel, STREAM, b"a,b,c") == ([b"a", b"b", b"c"], [()])
        together = await asyncio.gather(*(_collect(channel, UNARY, b"x%d" % i) for i in range(20)))
        assert [responses for responses, _ in together] == [[b"X%d" % i] for i in range(20)]
        metadata, remaining = handlers.seen[0]
        assert metadata == (("k", "v"),)
        assert remaining is not None and 4.0 < remaining <= 5.0
        assert handlers.seen[1][1] is None  # no deadline

    _run(tmp_path, body)


def test_statuses_come_back_with_details_and_trailing_metadata(tmp_path: Path) -> None:
    async def body(channel: PeerChannel, handlers: Handlers, _: str) -> None:
        with pytest.raises(PeerStatus) as refused:
            await _collect(channel, UNARY, b"refuse")
        assert (refused.value.code, refused.value.details) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "say why",
        )
        assert refused.value.trailing == (("why-bin", b"\x01"),)
        got: list[bytes] = []
        with pytest.raises(PeerStatus) as stopped:
            async for part in channel.call(STREAM, b"a,b!", (), None, lambda _: None):
                got.append(part)
        assert got == [b"a", b"b!"] and stopped.value.code is grpc.StatusCode.UNAVAILABLE
        with pytest.raises(PeerStatus) as bug:
            await _collect(channel, BROKEN, b"")
        assert bug.value.code is grpc.StatusCode.INTERNAL
        with pytest.raises(PeerStatus) as unknown:
            await _collect(channel, "/t.S/Nope", b"")
        assert unknown.value.code is grpc.StatusCode.UNIMPLEMENTED
        assert await _collect(channel, UNARY, b"ok") == ([b"OK"], [(("done", "yes"),)])

    _run(tmp_path, body)


def test_a_caller_that_goes_away_cancels_the_call_there(tmp_path: Path) -> None:
    async def body(channel: PeerChannel, handlers: Handlers, _: str) -> None:
        waiting = asyncio.create_task(_collect(channel, SLOW, b"x"))
        await asyncio.wait_for(handlers.slow_started.wait(), 5)
        waiting.cancel()
        await asyncio.wait_for(handlers.cancelled.wait(), 5)
        assert await _collect(channel, UNARY, b"after") == ([b"AFTER"], [(("done", "yes"),)])

    _run(tmp_path, body)


def test_a_connection_that_cannot_be_made_or_breaks_is_lost_then_made_again(
    tmp_path: Path,
) -> None:
    async def body(channel: PeerChannel, handlers: Handlers, path: str) -> None:
        nowhere = PeerChannel(str(tmp_path / "nobody.sock"))
        with pytest.raises(PeerLost, match="cannot connect"):
            await _collect(nowhere, UNARY, b"x")
        waiting = asyncio.create_task(_collect(channel, SLOW, b"x"))
        await asyncio.wait_for(handlers.slow_started.wait(), 5)
        await channel.close()  # the connection breaks under the call
        with pytest.raises(PeerLost, match="failed during the call"):
            await asyncio.wait_for(waiting, 5)
        await asyncio.wait_for(handlers.cancelled.wait(), 5)  # the other side stopped it
        assert await _collect(channel, UNARY, b"again") == ([b"AGAIN"], [(("done", "yes"),)])

    _run(tmp_path, body)
