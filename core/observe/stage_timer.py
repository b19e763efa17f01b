"""`StageTimer`: one mechanism for stage wall times, trace spans and stage metrics.

Each stage is timed once; the timing goes into the result (`timings()`), to the request's
`TelemetrySink` (latency histograms) and, when the span current at construction records, into a
child span named `<pipeline>.<stage>`. The parent and the sink are captured at construction, so
stages run on other threads (the lexical search) still land under the right parent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace import Span

from core.observe.telemetry_sink import current_sink
from core.observe.tracing import Attributes, mark_failed, recording_parent, start_child

STAGE_ATTRIBUTE = "groundwire.stage"


class StageTimer:
    """Records (stage, milliseconds) in the order stages finish; thread-safe."""

    def __init__(self, pipeline: str = "retrieve") -> None:
        """`pipeline` names the stages' family in span names and metrics ("retrieve", "index",
        "answer")."""
        self._pipeline = pipeline
        self._timings: list[tuple[str, float]] = []
        self._lock = threading.Lock()
        self._sink = current_sink()
        self._parent = recording_parent()

    @contextmanager
    def stage(
        self, name: str, attributes: Attributes | None = None, *, current: bool = True
    ) -> Iterator[Span]:
        """Time the body of a `with` block as stage `name`; yields its span (non-recording when
        tracing is off) for attributes known only inside. `current=False` keeps the span out of
        the context (for a block that spans an async generator's yields)."""
        start = time.perf_counter()
        if self._parent is None:
            try:
                yield trace.INVALID_SPAN
            finally:
                self.record(name, (time.perf_counter() - start) * 1000.0, traced=False)
            return
        stage_span = start_child(
            self._span_name(name), self._parent, self._attributes(name, attributes)
        )
        try:
            if current:
                with trace.use_span(stage_span, record_exception=False):
                    yield stage_span
            else:
                yield stage_span
        except BaseException as exc:
            mark_failed(stage_span, exc)
            raise
        finally:
            self.record(name, (time.perf_counter() - start) * 1000.0, traced=False)
            stage_span.end()

    def record(self, name: str, millis: float, *, traced: bool = True) -> None:
        """Add a timing measured elsewhere (for example in another thread); with `traced`, a span
        ending now that lasted `millis` is added under the parent."""
        with self._lock:
            self._timings.append((name, millis))
        if self._sink is not None:
            self._sink.stage_finished(self._pipeline, name, millis / 1000.0)
        if traced and self._parent is not None:
            end = time.time_ns()
            start = end - int(millis * 1_000_000)
            span = start_child(
                self._span_name(name), self._parent, self._attributes(name, None), start
            )
            span.end(end)

    def timings(self) -> tuple[tuple[str, float], ...]:
        """All timings so far."""
        with self._lock:
            return tuple(self._timings)

    def _span_name(self, stage: str) -> str:
        return f"{self._pipeline}.{stage}"

    def _attributes(self, stage: str, extra: Attributes | None) -> Attributes:
        return {STAGE_ATTRIBUTE: stage, **(extra or {})}
