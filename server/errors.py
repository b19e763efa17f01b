"""The one table mapping domain errors to gRPC status codes, with google.rpc details."""

from __future__ import annotations

import logging

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from core.errors import (
    AlreadyExists,
    Conflict,
    DataLoss,
    DeadlineExceeded,
    FailedPrecondition,
    GroundwireError,
    IndexNotReady,
    InvalidArgument,
    LimitExceeded,
    NotFound,
    Overloaded,
    PermissionDenied,
    Unauthenticated,
    UpstreamFailure,
)

logger = logging.getLogger(__name__)

STATUS_FOR_ERROR: dict[type[GroundwireError], grpc.StatusCode] = {
    InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    Conflict: grpc.StatusCode.ABORTED,
    Overloaded: grpc.StatusCode.RESOURCE_EXHAUSTED,
    LimitExceeded: grpc.StatusCode.RESOURCE_EXHAUSTED,
    UpstreamFailure: grpc.StatusCode.UNAVAILABLE,
    IndexNotReady: grpc.StatusCode.UNAVAILABLE,
    DeadlineExceeded: grpc.StatusCode.DEADLINE_EXCEEDED,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    DataLoss: grpc.StatusCode.DATA_LOSS,
    FailedPrecondition: grpc.StatusCode.FAILED_PRECONDITION,
}

INTERNAL_MESSAGE = "internal error; the server logged the details under request id {request_id}"
INDEX_NOT_READY_RETRY_S = 1.0


def status_code_for(error: GroundwireError) -> grpc.StatusCode:
    """The status code for a domain error (most specific class in the table wins)."""
    for cls in type(error).__mro__:
        if cls in STATUS_FOR_ERROR:
            return STATUS_FOR_ERROR[cls]
    return grpc.StatusCode.INTERNAL


def rich_status(error: GroundwireError) -> grpc.Status:
    """A grpc.Status carrying google.rpc details (BadRequest, RetryInfo) in its trailers."""
    code = status_code_for(error)
    message = str(error)
    if isinstance(error, UpstreamFailure) and error.reason:
        message = f"{message} (upstream said: {error.reason})"
    status = status_pb2.Status(code=code.value[0], message=message)
    detail = _detail_for(error)
    if detail is not None:
        packed = any_pb2.Any()
        packed.Pack(detail)
        status.details.append(packed)
    result: grpc.Status = rpc_status.to_status(status)
    return result


def internal_status(request_id: str) -> grpc.Status:
    """The generic INTERNAL status returned for unexpected exceptions."""
    status = status_pb2.Status(
        code=code_pb2.INTERNAL, message=INTERNAL_MESSAGE.format(request_id=request_id)
    )
    result: grpc.Status = rpc_status.to_status(status)
    return result


def _detail_for(
    error: GroundwireError,
) -> error_details_pb2.BadRequest | error_details_pb2.RetryInfo | None:
    if isinstance(error, InvalidArgument) and error.violations:
        return error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(
                    field=v.field, description=v.description
                )
                for v in error.violations
            ]
        )
    retry_after = None
    if isinstance(error, Overloaded):
        retry_after = error.retry_after_s
    elif isinstance(error, IndexNotReady):
        retry_after = INDEX_NOT_READY_RETRY_S
    if retry_after is None:
        return None
    delay = duration_pb2.Duration()
    delay.FromNanoseconds(int(retry_after * 1e9))
    return error_details_pb2.RetryInfo(retry_delay=delay)
