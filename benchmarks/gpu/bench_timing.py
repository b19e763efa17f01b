"""Timing helpers for the GPU benchmark: synchronised per-call latency and back-to-back rates."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True, slots=True)
class Timing:
    """Per-call wall times in seconds, each call followed by a device synchronise."""

    samples_s: list[float]

    @property
    def p50_ms(self) -> float:
        """Median latency in milliseconds."""
        return 1000 * statistics.median(self.samples_s)

    @property
    def p99_ms(self) -> float:
        """99th percentile latency in milliseconds (the max for fewer than 100 samples)."""
        ordered = sorted(self.samples_s)
        return 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def synchronizer(device: str) -> Callable[[], None]:
    """A function that waits for queued work on `device` (a no-op on CPU)."""
    if device.startswith("cuda"):
        return torch.cuda.synchronize
    return lambda: None


@dataclass(frozen=True, slots=True)
class Timer:
    """How to time one measurement: `repeats` timed calls after `warmup` untimed ones, stopping
    early (after at least 3 calls) once `budget_s` seconds are spent."""

    repeats: int
    warmup: int
    budget_s: float

    def latency(self, call: Callable[[], object], device: str) -> Timing:
        """Latency of `call`, synchronised after every call."""
        sync = synchronizer(device)
        for _ in range(self.warmup):
            call()
        sync()
        samples: list[float] = []
        deadline = time.perf_counter() + self.budget_s
        for _ in range(self.repeats):
            started = time.perf_counter()
            call()
            sync()
            samples.append(time.perf_counter() - started)
            if time.perf_counter() > deadline and len(samples) >= 3:
                break
        return Timing(samples)

    def back_to_back(self, call: Callable[[], object], device: str) -> float:
        """Mean seconds per call over `repeats` calls issued back to back (one synchronise)."""
        sync = synchronizer(device)
        for _ in range(self.warmup):
            call()
        sync()
        started = time.perf_counter()
        for _ in range(self.repeats):
            call()
        sync()
        return (time.perf_counter() - started) / self.repeats
