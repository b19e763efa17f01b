"""`TelemetryInterceptor`: one server span, request id and metric samples per RPC.

The span continues the caller's W3C trace context (`traceparent` / `tracestate` metadata) and
carries the RPC semantic conventions (`rpc.system`, `rpc.service`, `rpc.method`,
`rpc.grpc.status_code`). The status code is read from the servicer context after the handler
(the handlers in `server.handlers` turn every error into an abort), never from exception text.
While the RPC runs, the request id, the span and the `TelemetrySink` are in its context, so core
stages and log records on worker threads see them too.

A process of several does not count the RPCs another process forwarded to it (they arrive on its
private unix socket: writes a reader forwards to the primary, reads handed to a less busy
process): the process that received the call counts it, so summing the RPC series over the
server's processes counts each caller's call once. The process that runs a forwarded call still
traces it and counts the stages it runs for it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import grpc
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from core.observe.telemetry_sink import observing
from core.observe.tracing import tracer
from server.process_role import arrived_privately
from server.request_context import request_id_from, request_id_var
from server.telemetry.server_metrics import ServerMetrics

Context = grpc.aio.ServicerContext[Any, Any]
REQUEST_ID_ATTRIBUTE = "groundwire.request_id"
UNTRACED_SERVICES = frozenset({"grpc.health.v1.Health"})  # probes: counted, not traced


@dataclass(frozen=True, slots=True)
class RpcName:
    """One method as the metrics and the span name it."""

    grpc_type: str  # unary | server_stream | client_stream | bidi_stream
    service: str
    method: str

    @classmethod
    def parse(cls, full_method: str, grpc_type: str) -> RpcName:
        """From grpc's "/package.Service/Method"."""
        service, _, method = full_method.lstrip("/").rpartition("/")
        return cls(grpc_type, service, method)


class TelemetryInterceptor(grpc.aio.ServerInterceptor):
    """Wraps every handler; `metrics` None leaves metrics out (tracing and ids still apply).
    `skip_forwarded`: in a process of several, leave calls another process forwarded to it out
    of the RPC series (the process that received them counted them)."""

    def __init__(self, metrics: ServerMetrics | None, skip_forwarded: bool = False) -> None:
        self._metrics = metrics
        self._skip_forwarded = skip_forwarded

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        """The handler grpc found, wrapped (`wrap`)."""
        handler = await continuation(handler_call_details)
        return None if handler is None else self.wrap(handler, handler_call_details.method)

    def wrap(
        self, handler: grpc.RpcMethodHandler[Any, Any], method: str
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """`handler` of `method` ("/package.Service/Method") with its behaviour observed (grpc.aio
        behaviours are coroutines and async generators; the stubs type them as the sync ones)."""
        found: Any = handler
        if found.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(found.unary_unary, RpcName.parse(method, "unary")),
                request_deserializer=found.request_deserializer,
                response_serializer=found.response_serializer,
            )
        if found.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._streaming(found.unary_stream, RpcName.parse(method, "server_stream")),
                request_deserializer=found.request_deserializer,
                response_serializer=found.response_serializer,
            )
        if found.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                self._unary(found.stream_unary, RpcName.parse(method, "client_stream")),
                request_deserializer=found.request_deserializer,
                response_serializer=found.response_serializer,
            )
        return grpc.stream_stream_rpc_method_handler(
            self._streaming(found.stream_stream, RpcName.parse(method, "bidi_stream")),
            request_deserializer=found.request_deserializer,
            response_serializer=found.response_serializer,
        )

    def _unary(
        self, behavior: Callable[[Any, Context], Awaitable[Any]], rpc: RpcName
    ) -> Callable[[Any, Context], Awaitable[Any]]:
        async def handle(request: Any, context: Context) -> Any:
            with self._observed(rpc, context):
                return await behavior(request, context)

        return handle

    def _streaming(
        self, behavior: Callable[[Any, Context], AsyncIterator[Any]], rpc: RpcName
    ) -> Callable[[Any, Context], AsyncIterator[Any]]:
        async def handle(request: Any, context: Context) -> AsyncIterator[Any]:
            with self._observed(rpc, context):
                async for response in behavior(request, context):
                    yield response

        return handle

    @contextmanager
    def _observed(self, rpc: RpcName, context: Context) -> Iterator[None]:
        started = time.perf_counter()
        counted = self._metrics
        if self._skip_forwarded and arrived_privately(context):
            counted = None
        if counted is not None:
            counted.rpc_started(rpc.grpc_type, rpc.service, rpc.method)
        request_id = request_id_from(context)
        parent = propagate.extract(_carrier(context))
        span = (
            trace.INVALID_SPAN
            if rpc.service in UNTRACED_SERVICES
            else tracer().start_span(
                f"{rpc.service}/{rpc.method}",
                context=parent,
                kind=SpanKind.SERVER,
                attributes={
                    "rpc.system": "grpc",
                    "rpc.service": rpc.service,
                    "rpc.method": rpc.method,
                    REQUEST_ID_ATTRIBUTE: request_id,
                },
                record_exception=False,
                set_status_on_exception=False,
            )
        )
        attached = otel_context.attach(trace.set_span_in_context(span, parent))
        request_token = request_id_var.set(request_id)
        code = grpc.StatusCode.UNKNOWN
        try:
            with observing(self._metrics):
                yield
            code = _status_of(context, grpc.StatusCode.OK)
        except grpc.aio.AbortError:
            code = _status_of(context, grpc.StatusCode.UNKNOWN)
            raise
        except (asyncio.CancelledError, GeneratorExit):
            code = grpc.StatusCode.CANCELLED
            raise
        finally:
            request_id_var.reset(request_token)
            otel_context.detach(attached)
            span.set_attribute("rpc.grpc.status_code", code.value[0])
            if code is not grpc.StatusCode.OK:
                span.set_status(Status(StatusCode.ERROR, code.name))
            span.end()
            if counted is not None:
                elapsed = time.perf_counter() - started
                counted.rpc_finished(rpc.grpc_type, rpc.service, rpc.method, code.name, elapsed)


def _carrier(context: Context) -> dict[str, str]:
    """Text metadata as a propagation carrier (binary `-bin` entries left out)."""
    return {
        key: value for key, value in context.invocation_metadata() or () if isinstance(value, str)
    }


def _status_of(context: Context, default: grpc.StatusCode) -> grpc.StatusCode:
    """The code the handler set or aborted with; `default` when it set none."""
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    if isinstance(code, int):
        for candidate in grpc.StatusCode:
            if candidate.value[0] == code:
                return candidate
    return default
