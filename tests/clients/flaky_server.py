"""A tiny real gRPC server speaking groundwire's RetrievalService.Retrieve that fails on purpose.

It answers the first `failures` calls with a scripted status (and, optionally, a google.rpc
RetryInfo delay in the trailers, as groundwire's error table sends it), then succeeds; it records
when each attempt arrived and the metadata it carried.
"""

from __future__ import annotations

import time
from concurrent import futures
from typing import Any

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from groundwire.v1 import retrieval_service_pb2 as rs


class FlakyRetrieve:
    """Serves Retrieve on 127.0.0.1:0; the first `failures` attempts fail with `code`."""

    def __init__(
        self, code: grpc.StatusCode, failures: int, retry_delay_s: float | None = None
    ) -> None:
        self.code = code
        self.failures = failures
        self.retry_delay_s = retry_delay_s
        self.arrivals: list[float] = []
        self.metadata: list[dict[str, str]] = []
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        handler = grpc.unary_unary_rpc_method_handler(
            self._retrieve,
            request_deserializer=rs.RetrieveRequest.FromString,
            response_serializer=rs.RetrieveResponse.SerializeToString,
        )
        self._server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    "groundwire.v1.RetrievalService", {"Retrieve": handler}
                ),
            )
        )
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def gaps(self) -> list[float]:
        """Seconds between consecutive attempts."""
        return [b - a for a, b in zip(self.arrivals, self.arrivals[1:], strict=False)]

    def stop(self) -> None:
        self._server.stop(grace=None)

    def _retrieve(self, request: rs.RetrieveRequest, context: grpc.ServicerContext) -> Any:
        self.arrivals.append(time.monotonic())
        self.metadata.append({k: str(v) for k, v in context.invocation_metadata()})
        if len(self.arrivals) > self.failures:
            return rs.RetrieveResponse(collection=request.collection, warnings=["served"])
        status = status_pb2.Status(code=self.code.value[0], message="try again later")
        if self.retry_delay_s is not None:
            delay = duration_pb2.Duration()
            delay.FromNanoseconds(int(self.retry_delay_s * 1e9))
            packed = any_pb2.Any()
            packed.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
            status.details.append(packed)
        context.abort_with_status(rpc_status.to_status(status))
