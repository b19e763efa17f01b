"""A reader process forwards the RPCs it does not serve to the primary, unchanged.

One generic pass-through per RPC kind (unary, client streaming, server streaming): the request
bytes go to the primary over its private unix socket and the response bytes come back, so
nothing is parsed or re-encoded here. The caller's metadata (API key, request id, trace
context) travels with the call, the deadline becomes the forwarded call's timeout, and the
primary's status code, message and trailing metadata (rich error details) end the caller's RPC.
The reader admits the call first with the same key ring and role check the primary applies
(so a refusal never depends on the primary), and the primary checks it again as it does any
other call. A cancelled caller cancels the forwarded call.

A client stream is written to the primary by the forwarding handler itself, not handed to grpc
to consume: when the primary ends the call early (it refuses UpsertDocuments at a message while
the caller still streams the rest), a send still in flight fails, and grpc's client records that
failure as the call's status (INTERNAL, "Internal error from Core") over the primary's own when
the two race. So the sending stops the moment the call has the primary's status, before any
failed send is looked at, and sends that fail first never hide the status that follows them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

import grpc
from google.protobuf.descriptor import MethodDescriptor

from server.handlers import Admission, Context

logger = logging.getLogger(__name__)

_NOT_FORWARDED = frozenset({"user-agent", "te", "content-type", "grpc-timeout"})
Metadata = tuple[tuple[str, str | bytes], ...]


def forwarded_metadata(metadata: Iterable[tuple[str, Any]] | None) -> Metadata:
    """The caller's metadata without transport headers (which the forwarded call sets itself)."""
    return tuple(
        (key, value)
        for key, value in metadata or ()
        if not key.startswith(":") and key not in _NOT_FORWARDED
    )


class WriteForwarder:
    """Handlers that forward RPCs to the primary at `target` (`unix:<socket path>`), except
    those named in `served`."""

    def __init__(self, target: str, served: frozenset[str], max_message_bytes: int) -> None:
        self._target = target
        self._served = served
        self._options = [
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
        ]
        self._channel: grpc.aio.Channel | None = None

    def wrap(
        self, method: MethodDescriptor, local: grpc.RpcMethodHandler[Any, Any], admit: Admission
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """`handler_for`, or `local` (this process's handler) for the RPCs this process serves:
        a `server.handlers.Wrap`."""
        return self.handler_for(method, admit) or local

    def handler_for(
        self, method: MethodDescriptor, admit: Admission
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        """A forwarding handler for `method` that runs `admit` first, or None when this process
        serves it."""
        if method.name in self._served:
            return None
        path = f"/{method.containing_service.full_name}/{method.name}"
        if method.client_streaming and method.server_streaming:
            raise TypeError(f"{method.full_name}: bidirectional streaming is not forwarded yet")
        if method.client_streaming:
            return grpc.stream_unary_rpc_method_handler(self._stream_unary(path, admit))
        if method.server_streaming:
            return grpc.unary_stream_rpc_method_handler(self._unary_stream(path, admit))
        return grpc.unary_unary_rpc_method_handler(self._unary_unary(path, admit))

    async def close(self) -> None:
        """Close the channel to the primary."""
        if self._channel is not None:
            await self._channel.close()
            self._channel = None

    def _primary(self) -> grpc.aio.Channel:
        if self._channel is None:  # created on the serving loop, at the first forwarded call
            self._channel = grpc.aio.insecure_channel(self._target, options=self._options)
        return self._channel

    def _unary_unary(self, path: str, admit: Admission) -> Any:
        async def forward(request: bytes, context: Context) -> bytes:
            await admit(context)
            method: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = self._primary().unary_unary(
                path
            )
            call = method(
                request,
                metadata=forwarded_metadata(context.invocation_metadata()),
                timeout=context.time_remaining(),
            )
            return await _single_response(call, context)

        return forward

    def _stream_unary(self, path: str, admit: Admission) -> Any:
        async def forward(requests: AsyncIterator[bytes], context: Context) -> bytes:
            await admit(context)
            method: grpc.aio.StreamUnaryMultiCallable[bytes, bytes] = self._primary().stream_unary(
                path
            )
            call = method(  # no request iterator: `_send_all` writes the caller's messages
                metadata=forwarded_metadata(context.invocation_metadata()),
                timeout=context.time_remaining(),
            )
            sending = asyncio.create_task(_send_all(requests, call))

            def stop_sending(_: object) -> None:
                # runs inside the call's status update, before a failed send can replace it
                sending.cancel()

            call.add_done_callback(stop_sending)
            try:
                return await _single_response(call, context)
            finally:
                sending.cancel()
                await asyncio.gather(sending, return_exceptions=True)

        return forward

    def _unary_stream(self, path: str, admit: Admission) -> Any:
        async def forward(request: bytes, context: Context) -> AsyncIterator[bytes]:
            await admit(context)
            method: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = self._primary().unary_stream(
                path
            )
            call = method(
                request,
                metadata=forwarded_metadata(context.invocation_metadata()),
                timeout=context.time_remaining(),
            )
            try:
                async for response in call:
                    yield response
            except grpc.aio.AioRpcError as error:
                await _end_with(error, context)
                raise

        return forward


_ENDED = (grpc.aio.AioRpcError, grpc.aio.InternalError, asyncio.InvalidStateError)
"""What a write or half-close to a call the primary has ended raises."""


async def _send_all(requests: AsyncIterator[bytes], call: Any) -> None:
    """Write the caller's messages to the forwarded `call`, then half-close it. Cancelled as
    soon as the call ends; a send the primary no longer reads just stops the sending (the call's
    status says why); a caller's stream that breaks cancels the call, which would otherwise wait
    for the rest."""
    try:
        async for request in requests:
            await call.write(request)
        await call.done_writing()
    except _ENDED:
        return
    except Exception:
        logger.exception("the caller's stream broke; cancelling the forwarded call")
        call.cancel()
        raise


async def _single_response(call: Any, context: Context) -> bytes:
    """The primary's one response to a forwarded unary or client-streaming call, with its
    trailing metadata; its error status ends the caller's call."""
    try:
        response: bytes = await call
    except grpc.aio.AioRpcError as error:
        await _end_with(error, context)
        raise
    context.set_trailing_metadata(tuple(await call.trailing_metadata() or ()))
    return response


async def _end_with(error: grpc.aio.AioRpcError, context: Context) -> None:
    """End the caller's RPC with the primary's status (raises AbortError)."""
    trailing = tuple(error.trailing_metadata() or ())
    await context.abort(error.code(), error.details() or "", trailing)
