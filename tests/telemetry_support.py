"""Shared by the telemetry tests: an in-memory span exporter installed process-wide, W3C trace
parents a client sends, and span lookups."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once


@contextmanager
def memory_tracing() -> Iterator[InMemorySpanExporter]:
    """An SDK provider exporting to memory as the global provider, removed afterwards.

    OpenTelemetry installs a global provider only once per process; resetting its two globals
    is what opentelemetry-python's own test utilities (`reset_trace_globals`) do.
    """
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    try:
        yield exporter
    finally:
        provider.shutdown()
        trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
        trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]


@dataclass(frozen=True)
class ClientTrace:
    """A W3C trace context a client propagates: its trace id and its own (client) span id."""

    trace_id: int
    span_id: int

    @classmethod
    def new(cls) -> ClientTrace:
        """Random ids, as a client tracer would make them."""
        return cls(secrets.randbits(128) or 1, secrets.randbits(64) or 1)

    @property
    def traceparent(self) -> str:
        """The `traceparent` header value (sampled)."""
        return f"00-{self.trace_id:032x}-{self.span_id:016x}-01"

    def metadata(self, request_id: str = "") -> tuple[tuple[str, str], ...]:
        """gRPC metadata carrying the context (and a request id when given)."""
        pairs = [("traceparent", self.traceparent)]
        if request_id:
            pairs.append(("x-request-id", request_id))
        return tuple(pairs)


def spans_of(
    exporter: InMemorySpanExporter,
    trace_id: int,
    until: Callable[[Sequence[ReadableSpan]], bool] = lambda spans: bool(spans),
    timeout_s: float = 10.0,
) -> list[ReadableSpan]:
    """The finished spans of one trace, waiting until `until` holds (streams end their server
    span after the client saw the last message)."""
    deadline = time.monotonic() + timeout_s
    while True:
        spans = [
            s
            for s in exporter.get_finished_spans()
            if s.context is not None and s.context.trace_id == trace_id
        ]
        if until(spans) or time.monotonic() > deadline:
            return spans
        time.sleep(0.02)


def named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    """The spans called `name`."""
    return [s for s in spans if s.name == name]


def one(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    """The single span called `name`."""
    found = named(spans, name)
    assert len(found) == 1, f"expected one {name!r} span, got {[s.name for s in spans]}"
    return found[0]


def children(spans: Sequence[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    """Direct children of `parent`, in start order."""
    assert parent.context is not None
    found = [
        s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id
    ]
    return sorted(found, key=lambda s: s.start_time or 0)
