"""A per-call deadline shared by all attempts of one call."""

from __future__ import annotations

import time


class Deadline:
    """`timeout_s` seconds from now (None: no deadline)."""

    def __init__(self, timeout_s: float | None) -> None:
        if timeout_s is not None and timeout_s <= 0:
            raise ValueError(f"timeout must be positive seconds, got {timeout_s}")
        self._at = None if timeout_s is None else time.monotonic() + timeout_s

    def remaining(self) -> float | None:
        """Seconds left for the next attempt (None: unbounded)."""
        if self._at is None:
            return None
        return max(0.0, self._at - time.monotonic())

    def allows_wait(self, delay_s: float) -> bool:
        """Whether waiting `delay_s` still leaves time for another attempt."""
        return self._at is None or time.monotonic() + delay_s < self._at
