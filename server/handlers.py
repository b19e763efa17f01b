"""Generic gRPC handlers built from the proto service descriptors: safe request parsing,
request ids, the checks every RPC passes at the edge (key, role, readiness) and the domain-error
-> status table.

grpc Python interceptors cannot see handler exceptions, so every servicer method is wrapped here.
Requests that fail to parse (for example a string field holding invalid UTF-8) become
INVALID_ARGUMENT instead of grpc's default INTERNAL.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import DecodeError, Message

from core.errors import GroundwireError, InvalidArgument
from server.authentication import Authenticator
from server.errors import internal_status, rich_status
from server.principal import principal_var
from server.request_context import request_id_from, request_id_var
from server.rpc_declaration import Implementation, RpcPolicy, implementations

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
    """Admits the caller of one RPC: authenticates it, checks its role, then server readiness."""

    authenticator: Authenticator
    rpc: str
    policy: RpcPolicy
    require_loaded: Callable[[], None]

    def admit(self, context: Context) -> None:
        principal = self.authenticator.authenticate(context.invocation_metadata())
        principal.require(self.policy.role, self.rpc)
        if self.policy.needs_loaded:
            self.require_loaded()
        principal_var.set(principal)

    async def admit_or_abort(self, context: Context) -> None:
        """`admit`, ending the RPC with the refusal's status (AbortError) when refused."""
        token = request_id_var.set(request_id_from(context))
        try:
            self.admit(context)
        except GroundwireError as exc:
            await _abort_for(exc, context)
        finally:
            request_id_var.reset(token)


Admission = Callable[[Context], Awaitable[None]]
Wrap = Callable[
    [MethodDescriptor, "grpc.RpcMethodHandler[Any, Any]", Admission],
    "grpc.RpcMethodHandler[Any, Any]",
]
"""Takes an RPC's handler and its admission check and returns the handler to serve it with: the
same one, one around it, or one instead of it (see `service_handler`)."""


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
        # No reset: a cancelled stream's generator is closed from another context, where a reset
        # raises; every RPC runs in its own task, whose context copy ends with it.
        request_id_var.set(request_id_from(context))
        try:
            guard.admit(context)
            async for item in behavior(_check(request), context):
                yield item
        except grpc.aio.AbortError:
            raise
        except Exception as exc:  # noqa: BLE001
            await _abort_for(exc, context)

    return handle


async def _checked_stream(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for request in requests:
        yield _check(request)


_KINDS: dict[
    tuple[bool, bool],
    tuple[str, Callable[..., Any], Callable[..., grpc.RpcMethodHandler[Any, Any]]],
] = {
    # (client streaming, server streaming): name, wrapper, grpc handler factory
    (False, False): (
        "unary_unary",
        lambda behavior, guard: _awaited(behavior, _check, guard),
        grpc.unary_unary_rpc_method_handler,
    ),
    (False, True): ("unary_stream", _server_stream, grpc.unary_stream_rpc_method_handler),
    (True, False): (
        "stream_unary",
        lambda behavior, guard: _awaited(behavior, _checked_stream, guard),
        grpc.stream_unary_rpc_method_handler,
    ),
}


def service_handler(
    service: ServiceDescriptor,
    servicers: Sequence[object],
    authenticator: Authenticator,
    require_loaded: Callable[[], None],
    wraps: Sequence[Wrap] = (),
) -> grpc.GenericRpcHandler:
    """A generic handler serving every RPC of the proto `service` with the `@rpc` methods of
    `servicers`, each guarded by its declared role and readiness.

    Each of `wraps`, in turn, may replace an RPC's handler, given the RPC's admission check to
    run first: a reader process forwards writes to the primary (server/write_forwarding.py), a
    process of several hands some reads to a less busy one (server/read_balancing.py).

    Raises TypeError when the proto and the implementations disagree (an RPC without an
    implementation, an implementation of no RPC, or the wrong streaming kind), so the server
    never starts with an RPC missing.
    """
    found = implementations(servicers)
    methods = {method.name: method for method in service.methods}
    missing, unknown = sorted(set(methods) - set(found)), sorted(set(found) - set(methods))
    if missing or unknown:
        raise TypeError(
            f"{service.full_name}: the proto's RPCs {missing} have no @rpc implementation and "
            f"the implementations {unknown} match no RPC of the proto; make them agree"
        )
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for name, method in methods.items():
        guard = _Guard(authenticator, method.name, found[name].policy, require_loaded)
        handler = _method_handler(method, found[name], guard)
        for wrap in wraps:
            handler = wrap(method, handler, guard.admit_or_abort)
        handlers[name] = handler
    return grpc.method_handlers_generic_handler(service.full_name, handlers)


def _method_handler(
    method: MethodDescriptor, implementation: Implementation, guard: _Guard
) -> grpc.RpcMethodHandler[Any, Any]:
    kind = _KINDS.get((method.client_streaming, method.server_streaming))
    if kind is None:
        raise TypeError(f"{method.full_name}: bidirectional streaming is not supported yet")
    kind_name, wrap, make = kind
    if implementation.streams_responses != method.server_streaming:
        raise TypeError(
            f"{method.full_name} is {kind_name}: its implementation must "
            f"{'be' if method.server_streaming else 'not be'} an async generator"
        )
    request = message_factory.GetMessageClass(method.input_type)
    response = message_factory.GetMessageClass(method.output_type)
    return make(
        wrap(implementation.behavior, guard),
        request_deserializer=_parser(request),
        response_serializer=response.SerializeToString,
    )
