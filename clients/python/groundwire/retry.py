"""When a failed call is tried again: exponential backoff that yields to the server's RetryInfo."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import grpc

from groundwire.errors import GroundwireError


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries of calls that failed with a transient status.

    UNAVAILABLE is always retried. RESOURCE_EXHAUSTED is retried only when the server sent a
    google.rpc.RetryInfo (it is overloaded for a moment); without one it reports a hard limit
    (a quota, a size) that another attempt would hit again. The wait before attempt n+1 is the
    server's RetryInfo delay when it sent one, else `initial_backoff_s * multiplier**(n-1)`
    capped at `max_backoff_s`, with +-`jitter` relative randomisation. A call's deadline covers
    all its attempts: no retry starts that could not finish before it.
    """

    max_attempts: int = 4
    """Attempts in total, the first included; 1 turns retries off."""
    initial_backoff_s: float = 0.2
    max_backoff_s: float = 5.0
    multiplier: float = 2.0
    jitter: float = 0.2
    retryable: frozenset[grpc.StatusCode] = field(
        default_factory=lambda: frozenset(
            {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED}
        )
    )
    needs_retry_info: frozenset[grpc.StatusCode] = field(
        default_factory=lambda: frozenset({grpc.StatusCode.RESOURCE_EXHAUSTED})
    )
    """Codes among `retryable` that are retried only when the server sent RetryInfo."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1 (1 means no retries)")
        if self.initial_backoff_s < 0 or self.max_backoff_s < 0 or self.multiplier < 1:
            raise ValueError("backoffs must be >= 0 and multiplier >= 1")
        if not 0 <= self.jitter < 1:
            raise ValueError("jitter must be in [0, 1)")

    def delay_before_retry(self, error: GroundwireError, attempt: int) -> float | None:
        """Seconds to wait before trying again after `attempt` (1-based) failed; None: give up."""
        if attempt >= self.max_attempts or error.code not in self.retryable:
            return None
        if error.retry_delay_s is not None:
            return error.retry_delay_s
        if error.code in self.needs_retry_info:
            return None
        backoff = min(self.max_backoff_s, self.initial_backoff_s * self.multiplier ** (attempt - 1))
        return backoff * (1 + random.uniform(-self.jitter, self.jitter))


NO_RETRIES = RetryPolicy(max_attempts=1)
