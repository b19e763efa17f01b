"""What timing one stage costs, in microseconds: the plain timer StageTimer used to be, StageTimer
with tracing off (no SDK) and on (SDK, all sampled, batched to a discarding exporter).

Run from the repository root: .venv/bin/python -m benchmarks.retrieve.stage_timer_overhead

A Retrieve times 10 stages inside one `retrieve` span, so its added cost is about 10x the stage
difference plus one span. Writes results/stage_timer_overhead.{json,md}.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from benchmarks.retrieve.tracing_overhead import Discard, set_provider
from core.observe.stage_timer import StageTimer
from core.observe.tracing import span

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
N = 20_000
REPEATS = 7


class PlainTimer:
    """StageTimer as it was before tracing: perf_counter around the block, one list append."""

    def __init__(self) -> None:
        self._timings: list[tuple[str, float]] = []

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self._timings.append((name, (time.perf_counter() - start) * 1000.0))


def per_call_us(body: Callable[[], None]) -> float:
    """Median over REPEATS of the mean microseconds per call of `body`, inside a root span."""
    runs = []
    for _ in range(REPEATS):
        with trace.get_tracer("bench").start_as_current_span("rpc"):
            started = time.perf_counter()
            for _ in range(N):
                body()
            runs.append((time.perf_counter() - started) / N * 1e6)
    return statistics.median(runs)


def stage_of(timer: PlainTimer | StageTimer) -> Callable[[], None]:
    def body() -> None:
        with timer.stage("embed"):
            pass

    return body


def no_op_span() -> None:
    with span("retrieve"):
        pass


def measure() -> dict[str, float]:
    set_provider(None)
    results = {
        "plain timer (before)": per_call_us(stage_of(PlainTimer())),
        "StageTimer, tracing off": 0.0,
        "span(), tracing off": per_call_us(no_op_span),
    }
    with trace.get_tracer("bench").start_as_current_span("rpc"):
        off = StageTimer()
    results["StageTimer, tracing off"] = per_call_us(stage_of(off))
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Discard(), max_queue_size=N * REPEATS))
    set_provider(provider)
    with trace.get_tracer("bench").start_as_current_span("rpc"):
        on = StageTimer()
    results["StageTimer, tracing on"] = per_call_us(stage_of(on))
    set_provider(None)
    provider.shutdown()
    return {name: round(value, 2) for name, value in results.items()}


def main() -> None:
    results = measure()
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}",
        "calls": N,
        "us_per_stage": results,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "stage_timer_overhead.json").write_text(json.dumps(report, indent=2) + "\n")
    plain = results["plain timer (before)"]
    lines = [
        f"# Cost of timing one stage ({report['date']}, {report['machine']})",
        "",
        "Produced by `benchmarks/retrieve/stage_timer_overhead.py`: mean microseconds per "
        f"`with timer.stage(...)` over {N:,} calls, median of {REPEATS} runs, inside a root span. "
        "A Retrieve times 10 stages and opens one `retrieve` span.",
        "",
        "| timer | us per stage | added per stage vs before | added per Retrieve (10 stages + 1 span) |",
        "|---|---|---|---|",
    ]
    span_us = results["span(), tracing off"]
    for name, value in results.items():
        if name.startswith("span"):
            lines.append(f"| {name} (the `retrieve` span) | {value} | | |")
            continue
        added = value - plain
        per_retrieve = 10 * added + (span_us if "off" in name else 0.0)
        lines.append(
            f"| {name} | {value} | {added:+.2f} | "
            f"{'' if name.startswith('plain') else f'{per_retrieve:+.1f} us'} |"
        )
    (RESULTS / "stage_timer_overhead.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
