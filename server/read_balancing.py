"""A process of several hands a Retrieve or Answer to another with fewer of them under way.

The processes share the port with SO_REUSEPORT, and the kernel spreads connections, not calls:
one client channel (one HTTP/2 connection, what grpc clients open by default) lands every call
it makes on one process, whose GIL and threads then use about two thirds of a 2-core machine
while the other process idles; eight connections still split 5:3 or 6:2 more often than 4:4.
So each process counts the balanced RPCs (`BALANCED_RPCS`) it runs on the load board
(server/load_board.py), and one that arrives from a caller while another process runs at least
`MARGIN` fewer, and a quarter (`MARGIN_SHARE`) of this one's fewer, is handed, as bytes, to that
process (the least busy one) over its peer socket
(server/peer_calls.py), where the very handler of its port serves it. A handed-over call always
runs where it was handed.

The receiving process admits the call first (key, role, readiness), as a reader does before it
forwards a write (server/write_forwarding.py); the caller's metadata and deadline travel with
it, a caller that goes away cancels it, and the other process's status, message and trailing
metadata end the caller's call. Both RPCs only read, so a call whose connection to the other
process cannot be made or fails before any response (that process died or is restarting) runs
here instead, and that process is left alone for `DOWN_S` seconds. A process counts the calls it
has handed to another and not yet seen end, and takes the larger of that and the board's count
as the other's load, so a burst of arrivals does not all go to one process before its count
rises.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, TypeAlias

import grpc
from google.protobuf.descriptor import MethodDescriptor

from server.handlers import Admission, Context
from server.load_board import NOT_SERVING, LoadBoard
from server.peer_calls import PeerCallServer, PeerChannel, PeerLost, PeerStatus
from server.process_role import BALANCED_RPCS, ProcessRole
from server.write_forwarding import forwarded_metadata

logger = logging.getLogger(__name__)

MARGIN = 1
"""Hand a call over when another process runs at least this many fewer balanced calls..."""
MARGIN_SHARE = 4
"""...and at least 1/MARGIN_SHARE of this process's calls fewer: under a load that keeps
every process busy, a handed-over call costs a second gRPC call's CPU and gains nothing."""
DOWN_S = 1.0
"""How long a process that could not take a handed-over call is not chosen again."""
DRAIN_POLL_S = 0.01

Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"
Observe = Callable[[Handler, str], Handler]
"""(handler, method path) -> the handler observed by telemetry (the interceptor's `wrap`)."""
HandedOver = Callable[[str, str], None]
"""(RPC name, outcome: "handed" or "ran_here") for each call this process tried to hand over
(ServerMetrics.call_handed_over)."""


def _uncounted(method: str, outcome: str) -> None:
    return None


class ReadBalancer:
    """The balancing of this process (`role`) over the server's processes on `board`; `observe`
    wraps the handlers that serve calls handed to this process (the port's are wrapped by the
    gRPC server's interceptor); `handed_over` counts the calls it hands over."""

    def __init__(
        self,
        role: ProcessRole,
        board: LoadBoard,
        observe: Observe,
        handed_over: HandedOver | None = None,
    ) -> None:
        self._role = role
        self._board = board
        self._observe = observe
        self._handed_over = handed_over or _uncounted
        self._running = 0
        self._serving = False
        self._sent = [0] * role.processes
        self._down_until = [0.0] * role.processes
        self._handed: dict[str, Handler] = {}
        self._server = PeerCallServer(role.peer_socket(role.number), self._handed.get)
        self._channels: dict[int, PeerChannel] = {}

    async def start(self) -> None:
        """Listen on this process's peer socket (on the serving loop)."""
        await self._server.start()

    def serving(self) -> None:
        """Take handed-over calls from now on (the process has loaded)."""
        self._serving = True
        self._publish()

    def stopping(self) -> None:
        """Take no more handed-over calls (the process is stopping)."""
        self._serving = False
        self._publish()

    async def close(self, grace_s: float = 0.0) -> None:
        """Let the calls under way here end (`grace_s` seconds at most; those handed over by
        another process still arrive until it sees this one stopping), then stop the peer
        socket (cancelling what still runs), close the connections to the others and unmap the
        board."""
        deadline = time.monotonic() + grace_s
        while self._running and time.monotonic() < deadline:
            await asyncio.sleep(DRAIN_POLL_S)
        await self._server.close()
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
        self._board.close()

    def handler_for(self, method: MethodDescriptor, local: Handler, admit: Admission) -> Handler:
        """`local` (this process's handler of `method`), balanced when `method` is one of
        `BALANCED_RPCS`; any other handler unchanged."""
        if method.name not in BALANCED_RPCS:
            return local
        path = f"/{method.containing_service.full_name}/{method.name}"
        self._handed[path] = self._counted(self._observe(local, path), method.server_streaming)
        serialize: Any = local.response_serializer

        def response_bytes(response: Any) -> bytes:
            return response if isinstance(response, bytes) else serialize(response)

        counted = self._counted(local, method.server_streaming)
        if method.server_streaming:
            return grpc.unary_stream_rpc_method_handler(
                self._unary_stream(path, counted, admit), response_serializer=response_bytes
            )
        return grpc.unary_unary_rpc_method_handler(
            self._unary_unary(path, counted, admit), response_serializer=response_bytes
        )

    def choose(self) -> int | None:
        """The process to hand a call arriving now to, or None to run it here."""
        ceiling = self._running - max(MARGIN, self._running // MARGIN_SHARE)
        chosen, now = None, time.monotonic()
        for number in range(self._role.processes):
            if number == self._role.number or self._down_until[number] > now:
                continue
            load = max(self._board.get(number), self._sent[number])
            if load <= ceiling:
                chosen, ceiling = number, load - 1  # a later one must be less busy still
        return chosen

    def _publish(self) -> None:
        self._board.set(self._role.number, self._running if self._serving else NOT_SERVING)

    def _counted(self, handler: Handler, streaming: bool) -> Handler:
        """`handler` with its calls counted on the board while they run."""
        found: Any = handler
        parse, serialize = found.request_deserializer, found.response_serializer
        if streaming:
            behavior = found.unary_stream

            async def stream(request: Any, context: Context) -> AsyncIterator[Any]:
                self._running += 1
                self._publish()
                try:
                    async for response in behavior(request, context):
                        yield response
                finally:
                    self._running -= 1
                    self._publish()

            return grpc.unary_stream_rpc_method_handler(
                stream, request_deserializer=parse, response_serializer=serialize
            )
        single = found.unary_unary

        async def unary(request: Any, context: Context) -> Any:
            self._running += 1
            self._publish()
            try:
                return await single(request, context)
            finally:
                self._running -= 1
                self._publish()

        return grpc.unary_unary_rpc_method_handler(
            unary, request_deserializer=parse, response_serializer=serialize
        )

    def _unary_unary(self, path: str, local: Handler, admit: Admission) -> Any:
        rpc = path.rsplit("/", 1)[1]
        found: Any = local
        parse, behavior = found.request_deserializer, found.unary_unary

        async def handle(request: bytes, context: Context) -> Any:
            number = self.choose()
            if number is not None:
                await admit(context)
                try:
                    async with contextlib.aclosing(
                        self._hand(number, path, request, context)
                    ) as responses:
                        answer = [response async for response in responses][-1]
                    self._handed_over(rpc, "handed")
                    return answer
                except PeerLost as lost:
                    self._lost(number, rpc, lost)
                except PeerStatus as status:
                    self._handed_over(rpc, "handed")
                    await context.abort(status.code, status.details, status.trailing)
            return await behavior(parse(request), context)

        return handle

    def _unary_stream(self, path: str, local: Handler, admit: Admission) -> Any:
        rpc = path.rsplit("/", 1)[1]
        found: Any = local
        parse, behavior = found.request_deserializer, found.unary_stream

        async def handle(request: bytes, context: Context) -> AsyncIterator[Any]:
            number = self.choose()
            if number is not None:
                await admit(context)
                answered = False
                try:
                    async with contextlib.aclosing(
                        self._hand(number, path, request, context)
                    ) as responses:
                        async for response in responses:
                            answered = True
                            yield response
                    self._handed_over(rpc, "handed")
                    return
                except PeerLost as lost:
                    if answered:
                        self._handed_over(rpc, "handed")
                        await context.abort(grpc.StatusCode.UNAVAILABLE, str(lost))
                    self._lost(number, rpc, lost)
                except PeerStatus as status:
                    self._handed_over(rpc, "handed")
                    await context.abort(status.code, status.details, status.trailing)
            async for item in behavior(parse(request), context):
                yield item

        return handle

    async def _hand(
        self, number: int, path: str, request: bytes, context: Context
    ) -> AsyncGenerator[bytes, None]:
        """The responses of the call run by process `number`."""
        channel = self._channels.get(number)
        if channel is None:
            channel = self._channels[number] = PeerChannel(self._role.peer_socket(number))
        self._sent[number] += 1
        try:
            metadata = forwarded_metadata(context.invocation_metadata())
            responses = channel.call(
                path, request, metadata, context.time_remaining(), context.set_trailing_metadata
            )
            async with contextlib.aclosing(responses):
                async for response in responses:
                    yield response
        finally:
            self._sent[number] -= 1

    def _lost(self, number: int, rpc: str, lost: PeerLost) -> None:
        self._handed_over(rpc, "ran_here")
        self._down_until[number] = time.monotonic() + DOWN_S
        logger.warning(
            "process %d did not take a handed-over call (%s); running it here", number, lost
        )
