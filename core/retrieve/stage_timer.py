"""Wall-clock timing of pipeline stages."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class StageTimer:
    """Records (stage, milliseconds) in the order stages finish."""

    def __init__(self) -> None:
        self._timings: list[tuple[str, float]] = []

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the body of a `with` block as stage `name`."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.record(name, (time.perf_counter() - start) * 1000.0)

    def record(self, name: str, millis: float) -> None:
        """Add a timing measured elsewhere (for example in another thread)."""
        self._timings.append((name, millis))

    def timings(self) -> tuple[tuple[str, float], ...]:
        """All timings so far."""
        return tuple(self._timings)
