"""StageTimer: one timing per stage into the result, the request's sink, and (only under a
recording span) a child span; nothing traced when tracing is off."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core.observe.stage_timer import StageTimer
from core.observe.telemetry_sink import observing
from tests.telemetry_support import memory_tracing


class Recorded:
    """A TelemetrySink keeping what it was told."""

    def __init__(self) -> None:
        self.stages: list[tuple[str, str]] = []

    def stage_finished(self, pipeline: str, stage: str, seconds: float) -> None:
        assert seconds >= 0
        self.stages.append((pipeline, stage))

    def generation_finished(
        self,
        generator: str,
        first_token_s: float | None,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        raise AssertionError("not expected here")


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    with memory_tracing() as exporter:
        yield exporter


def test_without_a_recording_parent_only_timings_and_sink(spans: InMemorySpanExporter) -> None:
    sink = Recorded()
    with observing(sink):
        timer = StageTimer("retrieve")
    with timer.stage("embed") as span:
        assert not span.is_recording()
    assert [name for name, _ in timer.timings()] == ["embed"]
    assert sink.stages == [("retrieve", "embed")]
    assert spans.get_finished_spans() == ()


def test_stages_from_other_threads_land_under_the_parent(spans: InMemorySpanExporter) -> None:
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("rpc") as parent:
        timer = StageTimer("index")

    def in_worker() -> None:
        with timer.stage("chunk"):  # a thread with an empty context: the parent was captured
            pass

    worker = threading.Thread(target=in_worker)
    worker.start()
    worker.join()
    with timer.stage("embed"):
        pass
    with pytest.raises(KeyError), timer.stage("commit"):
        raise KeyError("row 7")
    timer.record("lexical", 2.5)
    finished = {s.name: s for s in spans.get_finished_spans()}
    assert set(finished) == {"rpc", "index.chunk", "index.embed", "index.commit", "index.lexical"}
    for name in ("index.chunk", "index.embed", "index.commit", "index.lexical"):
        span = finished[name]
        assert span.parent is not None and span.parent.span_id == parent.get_span_context().span_id
        assert dict(span.attributes or {})["groundwire.stage"] == name.split(".")[1]
    commit = finished["index.commit"]
    assert commit.status.description == "KeyError"  # the type, never the message
    lexical = finished["index.lexical"]
    assert lexical.end_time is not None and lexical.start_time is not None
    assert lexical.end_time - lexical.start_time == pytest.approx(2_500_000, abs=1_000)
    assert [name for name, _ in timer.timings()] == ["chunk", "embed", "commit", "lexical"]
