"""One exception type for every failed call: the gRPC code, the message and the server's details."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

STATUS_DETAILS_KEY = "grpc-status-details-bin"


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One invalid request field (google.rpc.BadRequest.FieldViolation)."""

    field: str
    """Path of the field, for example "top_k" or "filters.metadata_ranges[0].key"."""
    description: str
    """What is wrong and how to fix it."""


class GroundwireError(Exception):
    """A call that ended with a non-OK gRPC status.

    `code` is the grpc.StatusCode, `message` the server's message, `field_violations` the
    google.rpc.BadRequest details of INVALID_ARGUMENT, `retry_delay_s` the google.rpc.RetryInfo
    delay the server asked for (None when it sent none).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        field_violations: Sequence[FieldViolation] = (),
        retry_delay_s: float | None = None,
    ) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.field_violations = tuple(field_violations)
        self.retry_delay_s = retry_delay_s


def error_from_status(
    code: grpc.StatusCode, message: str, trailing_metadata: object
) -> GroundwireError:
    """A GroundwireError from a status and the trailing metadata that may carry google.rpc details."""
    violations: list[FieldViolation] = []
    retry_delay_s: float | None = None
    for detail in _status_details(trailing_metadata):
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad_request = error_details_pb2.BadRequest()
            detail.Unpack(bad_request)
            violations.extend(
                FieldViolation(v.field, v.description) for v in bad_request.field_violations
            )
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry_info = error_details_pb2.RetryInfo()
            detail.Unpack(retry_info)
            retry_delay_s = retry_info.retry_delay.ToNanoseconds() / 1e9
    return GroundwireError(code, message, violations, retry_delay_s)


def error_from_rpc(error: grpc.RpcError) -> GroundwireError:
    """A GroundwireError from a failed synchronous call (a grpc.Call that is also an RpcError)."""
    call: grpc.Call = error  # type: ignore[assignment]
    return error_from_status(call.code(), call.details() or "", call.trailing_metadata())


def _status_details(trailing_metadata: object) -> list[any_pb2.Any]:
    """The packed google.protobuf.Any details of the google.rpc.Status in the trailers."""
    for key, value in _pairs(trailing_metadata):
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            return list(status_pb2.Status.FromString(value).details)
    return []


def _pairs(metadata: object) -> list[tuple[str, object]]:
    if metadata is None:
        return []
    return [(str(item[0]), item[1]) for item in metadata]  # type: ignore[attr-defined]
