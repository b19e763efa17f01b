"""The domain error hierarchy. `server/` maps each class to one gRPC status code."""

from __future__ import annotations

from dataclasses import dataclass


class GroundwireError(Exception):
    """Base class of every error the domain raises on purpose."""


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One invalid request field: its dotted path and what is wrong with it."""

    field: str
    description: str


class InvalidArgument(GroundwireError):
    """The request is malformed; `violations` name each bad field and the fix."""

    def __init__(self, message: str, violations: tuple[FieldViolation, ...] = ()) -> None:
        super().__init__(message)
        self.violations = violations

    @classmethod
    def field(cls, field: str, description: str) -> InvalidArgument:
        """One violation whose description is also the message."""
        return cls(f"{field}: {description}", (FieldViolation(field, description),))


class NotFound(GroundwireError):
    """A named collection, document or chunk does not exist (or is not visible to the caller)."""


class AlreadyExists(GroundwireError):
    """A create names something that already exists."""


class Conflict(GroundwireError):
    """The request conflicts with the current state (for example a concurrent change)."""


class Overloaded(GroundwireError):
    """The server is at capacity; retry after `retry_after_s` seconds."""

    def __init__(self, message: str, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class UpstreamFailure(GroundwireError):
    """A model or external service failed; `reason` is what upstream said."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


class DeadlineExceeded(GroundwireError):
    """An upstream call ran out of time."""


class IndexNotReady(GroundwireError):
    """Indexes are still loading or rebuilding; retry shortly."""


class LimitExceeded(GroundwireError):
    """A configured size or count limit was reached (document size, collections per tenant...)."""


class Unauthenticated(GroundwireError):
    """The caller sent no credentials or credentials that match no key."""


class FailedPrecondition(GroundwireError):
    """The system is not in a state the operation needs (for example a collection indexed with
    another embedding model); retrying will not help until that state is fixed."""


class PermissionDenied(GroundwireError):
    """The caller's role does not allow the operation (within the caller's own tenant)."""


class DataLoss(GroundwireError):
    """Stored data is unreadable or fails its checksum (for example a corrupt snapshot)."""
