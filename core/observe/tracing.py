"""Spans through the OpenTelemetry API: children of the current span, and only when it records.

With no SDK installed (tracing off) or an unsampled parent, `span()` yields a non-recording span
without creating anything, so the hot path pays one context lookup. Exceptions mark a span as
failed with the exception's type name only: messages may quote user input.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

TRACER_NAME = "groundwire"
T = TypeVar("T")
Attributes = Mapping[str, AttributeValue]


_cached: tuple[trace.TracerProvider, trace.Tracer] | None = None


def tracer() -> trace.Tracer:
    """The groundwire tracer of the installed provider, cached per provider (a lookup costs
    tens of microseconds; tests and benchmarks swap providers)."""
    global _cached
    provider = trace.get_tracer_provider()
    cached = _cached
    if cached is not None and cached[0] is provider:
        return cached[1]
    found = provider.get_tracer(TRACER_NAME)
    _cached = (provider, found)
    return found


def recording_parent() -> otel_context.Context | None:
    """The current context when its span records; None when tracing is off or unsampled."""
    if not trace.get_current_span().is_recording():
        return None
    return otel_context.get_current()


def start_child(
    name: str,
    parent: otel_context.Context,
    attributes: Attributes | None = None,
    start_time_ns: int | None = None,
) -> Span:
    """A started span under `parent` (the caller ends it)."""
    return tracer().start_span(
        name,
        context=parent,
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        start_time=start_time_ns,
        record_exception=False,
        set_status_on_exception=False,
    )


def mark_failed(span: Span, exc: BaseException) -> None:
    """ERROR status naming the exception type (never its message)."""
    span.set_status(Status(StatusCode.ERROR, type(exc).__name__))


@contextmanager
def span(name: str, attributes: Attributes | None = None) -> Iterator[Span]:
    """A child of the current span, current inside the block; a no-op when nothing records."""
    parent = recording_parent()
    if parent is None:
        yield trace.INVALID_SPAN
        return
    child = start_child(name, parent, attributes)
    try:
        with trace.use_span(child, record_exception=False, set_status_on_exception=False):
            yield child
    except BaseException as exc:
        mark_failed(child, exc)
        raise
    finally:
        child.end()


def in_this_context(fn: Callable[..., T], *args: Any) -> Callable[[], T]:
    """`fn(*args)` bound to a copy of the caller's context (current span, request id, sink), for
    handing to an executor thread, which would otherwise run it in an empty context."""
    return functools.partial(contextvars.copy_context().run, fn, *args)
