"""Calls one process of the server hands another over a private unix socket (read balancing,
server/read_balancing.py).

A second gRPC hop would cost each forwarded call about as much CPU as the call itself (a client
call in one process, a server call in the other, both in Python), so the processes speak a small
framed protocol instead, over one stream connection per pair, multiplexed by call id. Every
frame is `FRAME` (payload length, call id, kind) followed by a pickled payload (the peers are
this server's own processes, behind a directory only this user can open):

- CALL (to the process that runs it): (method path, the caller's metadata, seconds to the
  caller's deadline or None, the request's bytes);
- CANCEL (to it): the caller went away, so the call's task is cancelled;
- MESSAGE (back): one response's bytes;
- END (back): (status code, details, trailing metadata), after the responses.

`PeerCallServer` runs each CALL with the very handler the process serves the RPC with on its
port (key check, validation, the pipeline, error statuses), observed by the telemetry
interceptor, in a `PeerContext`. `PeerChannel` makes calls on one connection; `PeerLost` says
the connection failed or could not be made, `PeerStatus` carries a status other than OK.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import pickle
import struct
from collections.abc import AsyncGenerator, Callable
from typing import Any

import grpc

from server.peer_context import Metadata, PeerContext

logger = logging.getLogger(__name__)

FRAME = struct.Struct("!IIB")
"""Payload length, call id, kind."""
CALL, CANCEL, MESSAGE, END = range(4)
_LOST = -1  # queued to a call whose connection failed


class PeerLost(ConnectionError):
    """The connection to the other process could not be made or failed during the call."""


class PeerStatus(Exception):
    """The other process ended the call with a status other than OK."""

    def __init__(self, code: grpc.StatusCode, details: str, trailing: Metadata) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code, self.details, self.trailing = code, details, trailing


def _forget(calls: dict[int, Any], call_id: int, _: object) -> None:
    calls.pop(call_id, None)


def _frame(call_id: int, kind: int, payload: Any) -> bytes:
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    return FRAME.pack(len(data), call_id, kind) + data


async def _read_frame(reader: asyncio.StreamReader) -> tuple[int, int, Any]:
    length, call_id, kind = FRAME.unpack(await reader.readexactly(FRAME.size))
    return call_id, kind, pickle.loads(await reader.readexactly(length))


Handlers = Callable[[str], "grpc.RpcMethodHandler[Any, Any] | None"]
"""Method path -> the handler this process serves it with (None: not one it takes over)."""


class PeerCallServer:
    """Runs the calls the other processes hand this one, on `path`."""

    def __init__(self, path: str, handlers: Handlers) -> None:
        self._path = path
        self._handlers = handlers
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Listen on the socket (on the running loop)."""
        self._server = await asyncio.start_unix_server(self._connection, self._path)

    async def close(self) -> None:
        """Stop listening and cancel the calls still running."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        this = asyncio.current_task()
        assert this is not None
        self._connections.add(this)
        calls: dict[int, asyncio.Task[None]] = {}
        try:
            while True:
                call_id, kind, payload = await _read_frame(reader)
                if kind == CALL:
                    task = asyncio.create_task(self._run(call_id, payload, writer))
                    calls[call_id] = task
                    task.add_done_callback(functools.partial(_forget, calls, call_id))
                elif kind == CANCEL and call_id in calls:
                    calls[call_id].cancel()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # the other process closed the connection, or this one stops
        finally:
            for task in list(calls.values()):
                task.cancel()
            await asyncio.gather(*calls.values(), return_exceptions=True)
            writer.close()
            self._connections.discard(this)

    async def _run(
        self, call_id: int, call: tuple[str, Metadata, float | None, bytes], writer: Any
    ) -> None:
        method, metadata, timeout_s, request = call
        handler: Any = self._handlers(method)
        if handler is None:
            writer.write(_frame(call_id, END, (grpc.StatusCode.UNIMPLEMENTED, method, ())))
            return
        context = PeerContext(metadata, timeout_s)
        serialize = handler.response_serializer
        try:
            parsed = handler.request_deserializer(request)
            if handler.unary_stream is not None:
                async for response in handler.unary_stream(parsed, context):
                    writer.write(_frame(call_id, MESSAGE, serialize(response)))
                    await writer.drain()
            else:
                response = await handler.unary_unary(parsed, context)
                writer.write(_frame(call_id, MESSAGE, serialize(response)))
        except grpc.aio.AbortError:
            pass  # the handler ended the call: its status is on the context
        except asyncio.CancelledError:
            return  # the caller went away: nobody reads a status
        except Exception:  # noqa: BLE001 - the handlers turn errors into aborts; this is a bug
            logger.exception("a handed-over %s call failed", method)
            writer.write(_frame(call_id, END, (grpc.StatusCode.INTERNAL, "internal error", ())))
            return
        writer.write(_frame(call_id, END, context.status()))


class PeerChannel:
    """One connection to another process's `PeerCallServer` at `path`, opened at the first call
    (and again after it failed), calls multiplexed on it."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._writer: asyncio.StreamWriter | None = None
        self._reading: asyncio.Task[None] | None = None
        self._connecting = asyncio.Lock()
        self._calls: dict[int, asyncio.Queue[tuple[int, Any]]] = {}
        self._ids = itertools.count(1)

    async def call(
        self,
        method: str,
        request: bytes,
        metadata: Metadata,
        timeout_s: float | None,
        trailing: Callable[[Metadata], None],
    ) -> AsyncGenerator[bytes, None]:
        """The responses of `method` run by the other process, then `trailing(metadata)` with
        the trailing metadata of its OK end; PeerStatus when it ends with another status,
        PeerLost when the connection cannot be made or fails. Closing the iterator before the
        end cancels the call there."""
        writer = await self._connected()
        call_id = next(self._ids)
        queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
        self._calls[call_id] = queue
        ended = False
        try:
            writer.write(_frame(call_id, CALL, (method, metadata, timeout_s, request)))
            while True:
                kind, payload = await queue.get()
                if kind == MESSAGE:
                    yield payload
                    continue
                ended = True
                if kind == _LOST:
                    raise PeerLost(f"the connection to {self._path} failed during the call")
                code, details, metadata_out = payload
                if code is not grpc.StatusCode.OK:
                    raise PeerStatus(code, details, metadata_out)
                trailing(metadata_out)
                return
        finally:
            self._calls.pop(call_id, None)
            if not ended and self._writer is writer and not writer.is_closing():
                writer.write(_frame(call_id, CANCEL, None))

    async def close(self) -> None:
        """Close the connection (calls still on it end with PeerLost)."""
        if self._writer is not None:
            self._writer.close()
        if self._reading is not None:
            self._reading.cancel()
            await asyncio.gather(self._reading, return_exceptions=True)

    async def _connected(self) -> asyncio.StreamWriter:
        if self._writer is not None and not self._writer.is_closing():
            return self._writer
        async with self._connecting:
            if self._writer is None or self._writer.is_closing():
                try:
                    reader, writer = await asyncio.open_unix_connection(self._path)
                except OSError as exc:
                    raise PeerLost(f"cannot connect to {self._path}: {exc}") from exc
                self._writer = writer
                self._reading = asyncio.create_task(self._read(reader, writer))
            return self._writer

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                call_id, kind, payload = await _read_frame(reader)
                queue = self._calls.get(call_id)
                if queue is not None:
                    queue.put_nowait((kind, payload))
                    if kind == END:
                        self._calls.pop(call_id, None)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            for queue in self._calls.values():
                queue.put_nowait((_LOST, None))
            self._calls.clear()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
