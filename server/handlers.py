"""Generic gRPC handlers: safe request parsing, request ids and the domain-error -> status table.

grpc Python interceptors cannot see handler exceptions, so every servicer method is wrapped here.
Requests that fail to parse (for example a string field holding invalid UTF-8) become
INVALID_ARGUMENT instead of grpc's default INTERNAL.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import DecodeError, Message

from core.errors import GroundwireError, InvalidArgument
from server.authentication import Authenticator
from server.errors import internal_status, rich_status
from server.principal import Role, principal_var
from server.request_context import request_id_from, request_id_var

logger = logging.getLogger(__name__)

Context = grpc.aio.ServicerContext[Any, Any]


@dataclass(frozen=True, slots=True)
class MalformedRequest:
    """Stands in for a request whose bytes did not parse."""

    type_name: str
    reason: str

    def error(self) -> InvalidArgument:
        """The error reported to the caller."""
        return InvalidArgument(
            f"the request is not a valid {self.type_name} message ({self.reason}); "
            "check that string fields hold valid UTF-8 and the client uses the groundwire.v1 proto"
        )


@dataclass(frozen=True, slots=True)
class Rpc:
    """One method of a service: its name, streaming kind, message types and behaviour."""

    name: str
    kind: str  # "unary_unary" | "unary_stream" | "stream_unary"
    request: type[Message]
    response: type[Message]
    behavior: Callable[..., Any]
    role: Role = Role.READER  # the least role allowed to call it


def _parser(cls: type[Message]) -> Callable[[bytes], Message | MalformedRequest]:
    def parse(data: bytes) -> Message | MalformedRequest:
        try:
            return cls.FromString(data)
        except (DecodeError, ValueError, RuntimeError) as exc:
            return MalformedRequest(cls.DESCRIPTOR.full_name, str(exc) or type(exc).__name__)

    return parse


async def _abort_for(exc: BaseException, context: Context) -> None:
    if isinstance(exc, GroundwireError):
        status = rich_status(exc)
        logger.info("%s: %s", status.code.name, exc)
    else:
        logger.error("unexpected error", exc_info=exc)
        status = internal_status(request_id_var.get())
    await context.abort(status.code, status.details, status.trailing_metadata)


def _check(request: Any) -> Any:
    if isinstance(request, MalformedRequest):
        raise request.error()
    return request


@dataclass(frozen=True, slots=True)
class _Guard:
    """Authenticates the caller of one RPC and checks its role."""

    authenticator: Authenticator
    rpc: str
    role: Role

    def admit(self, context: Context) -> None:
        principal = self.authenticator.authenticate(context.invocation_metadata())
        principal.require(self.role, self.rpc)
        principal_var.set(principal)


def _awaited(
    behavior: Callable[[Any, Context], Awaitable[Any]],
    prepare: Callable[[Any], Any],
    guard: _Guard,
) -> Callable[[Any, Context], Awaitable[Any]]:
    """Wrap a handler that returns one response (unary or client-streaming requests)."""

    async def handle(request: Any, context: Context) -> Any:
        token = request_id_var.set(request_id_from(context))
        try:
            guard.admit(context)
            return await behavior(prepare(request), context)
        except grpc.aio.AbortError:
            raise
        except Exception as exc:  # noqa: BLE001 - every exception becomes a status
            await _abort_for(exc, context)
        finally:
            request_id_var.reset(token)

    return handle


def _server_stream(
    behavior: Callable[[Any, Context], AsyncIterator[Any]], guard: _Guard
) -> Callable[[Any, Context], AsyncIterator[Any]]:
    async def handle(request: Any, context: Context) -> AsyncIterator[Any]:
        token = request_id_var.set(request_id_from(context))
        try:
            guard.admit(context)
            async for item in behavior(_check(request), context):
                yield item
        except grpc.aio.AbortError:
            raise
        except Exception as exc:  # noqa: BLE001
            await _abort_for(exc, context)
        finally:
            request_id_var.reset(token)

    return handle


async def _checked_stream(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for request in requests:
        yield _check(request)


_FACTORIES: dict[str, tuple[Callable[..., Any], Callable[..., grpc.RpcMethodHandler[Any, Any]]]] = {
    "unary_unary": (
        lambda behavior, guard: _awaited(behavior, _check, guard),
        grpc.unary_unary_rpc_method_handler,
    ),
    "unary_stream": (_server_stream, grpc.unary_stream_rpc_method_handler),
    "stream_unary": (
        lambda behavior, guard: _awaited(behavior, _checked_stream, guard),
        grpc.stream_unary_rpc_method_handler,
    ),
}


def service_handler(
    service: str, rpcs: list[Rpc], authenticator: Authenticator
) -> grpc.GenericRpcHandler:
    """A generic handler for `service` (full name) serving `rpcs`, each guarded by its role."""
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for rpc in rpcs:
        wrap, make = _FACTORIES[rpc.kind]
        handlers[rpc.name] = make(
            wrap(rpc.behavior, _Guard(authenticator, rpc.name, rpc.role)),
            request_deserializer=_parser(rpc.request),
            response_serializer=rpc.response.SerializeToString,
        )
    return grpc.method_handlers_generic_handler(service, handlers)
