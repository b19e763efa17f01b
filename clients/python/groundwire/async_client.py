"""The asyncio client (grpc.aio): one channel, the API key, deadlines and retries for every call."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import TracebackType

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from groundwire.async_index_calls import AsyncIndexCalls
from groundwire.async_invoker import AsyncInvoker
from groundwire.async_retrieval_calls import AsyncRetrievalCalls
from groundwire.client import DEFAULT_TIMEOUT_S
from groundwire.connection import Connection, connection_for
from groundwire.errors import GroundwireError
from groundwire.retry import RetryPolicy
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc


class AsyncClient(AsyncRetrievalCalls, AsyncIndexCalls):
    """A groundwire server, called from asyncio. Create it inside the event loop that uses it,
    ideally as `async with AsyncClient(...) as client:`. Options as `Client`.
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
        self._channel = self.connection.open_aio_channel()
        self._invoker = AsyncInvoker(self.connection.metadata(), retry or RetryPolicy(), timeout)
        self._retrieval = rs_grpc.RetrievalServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._index = ix_grpc.IndexServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._health = health_pb2_grpc.HealthStub(self._channel)

    async def health(self, service: str = "", *, timeout: float | None = None) -> str:
        """The grpc.health.v1 status name: "SERVING", "NOT_SERVING" (still loading), ..."""
        request = health_pb2.HealthCheckRequest(service=service)
        response: health_pb2.HealthCheckResponse = await self._invoker.unary(
            self._health.Check, request, timeout
        )
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))

    async def wait_until_connected(self, timeout: float) -> None:
        """Wait until the channel is connected; UNAVAILABLE GroundwireError after `timeout` s."""
        try:
            await asyncio.wait_for(self._channel.channel_ready(), timeout)
        except TimeoutError:
            raise GroundwireError(
                grpc.StatusCode.UNAVAILABLE,
                f"cannot connect to {self.connection.target} within {timeout:g}s",
            ) from None

    async def close(self) -> None:
        """Close the channel; calls in flight are cancelled."""
        await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
