"""The synchronous client: one channel, the API key, deadlines and retries for every call."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from groundwire.connection import Connection, connection_for
from groundwire.errors import GroundwireError
from groundwire.index_calls import IndexCalls
from groundwire.retrieval_calls import RetrievalCalls
from groundwire.retry import RetryPolicy
from groundwire.sync_invoker import SyncInvoker
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc

DEFAULT_TIMEOUT_S = 60.0


class Client(RetrievalCalls, IndexCalls):
    """A groundwire server, called synchronously. Use as a context manager or call `close()`.

    `target` is host:port (or a `Connection`). TLS: `ca_file` (and `cert_file` + `key_file`
    for mutual TLS). `api_key` is sent as `authorization: Bearer <key>`. `timeout` is the
    deadline in seconds of calls that give none (None: no deadline); `retry` says which
    failures are retried and how long to wait.
    """

    def __init__(
        self,
        target: str | Connection,
        *,
        api_key: str = "",
        ca_file: str | Path = "",
        cert_file: str | Path = "",
        key_file: str | Path = "",
        server_name: str = "",
        timeout: float | None = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.connection = connection_for(
            target,
            api_key=api_key,
            ca_file=ca_file,
            cert_file=cert_file,
            key_file=key_file,
            server_name=server_name,
        )
        self._channel = self.connection.open_channel()
        self._invoker = SyncInvoker(self.connection.metadata(), retry or RetryPolicy(), timeout)
        self._retrieval = rs_grpc.RetrievalServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._index = ix_grpc.IndexServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._health = health_pb2_grpc.HealthStub(self._channel)

    def health(self, service: str = "", *, timeout: float | None = None) -> str:
        """The grpc.health.v1 status name: "SERVING", "NOT_SERVING" (still loading), ..."""
        request = health_pb2.HealthCheckRequest(service=service)
        response: health_pb2.HealthCheckResponse = self._invoker.unary(
            self._health.Check, request, timeout
        )
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))

    def wait_until_connected(self, timeout: float) -> None:
        """Block until the channel is connected; UNAVAILABLE GroundwireError after `timeout` s."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise GroundwireError(
                grpc.StatusCode.UNAVAILABLE,
                f"cannot connect to {self.connection.target} within {timeout:g}s",
            ) from None

    def close(self) -> None:
        """Close the channel; calls in flight are cancelled."""
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
