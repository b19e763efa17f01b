"""`create_server(settings) -> (server, port)`: a real grpc.aio server with health and reflection.

Call it from inside a running event loop. The server answers immediately: health reports
NOT_SERVING (and RPCs UNAVAILABLE) until the model and indexes are loaded in the background.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from core.errors import InvalidArgument
from server.authentication import Authenticator
from server.handlers import Wrap, service_handler
from server.index_servicer import SERVICE as INDEX_SERVICE
from server.key_ring_file import KeyRingFile, watch_key_file
from server.load_board import LoadBoard
from server.process_role import READER_RPCS, SINGLE, ProcessKind, ProcessRole
from server.read_balancing import ReadBalancer
from server.retrieval_servicer import SERVICE as RETRIEVAL_SERVICE
from server.runtime import Runtime
from server.servicers import servicers
from server.settings import Settings
from server.telemetry.server_telemetry import ServerTelemetry
from server.write_forwarding import WriteForwarder

logger = logging.getLogger(__name__)

SERVICES = (RETRIEVAL_SERVICE.full_name, INDEX_SERVICE.full_name)


class GroundwireServer:
    """The grpc.aio server plus the runtime it serves; owns start-up loading and graceful shutdown."""

    def __init__(
        self,
        grpc_server: grpc.aio.Server,
        runtime: Runtime,
        health_servicer: health.aio.HealthServicer,
        keys: KeyRingFile | None = None,
        telemetry: ServerTelemetry | None = None,
        forwarder: WriteForwarder | None = None,
        balancer: ReadBalancer | None = None,
    ) -> None:
        self.grpc_server = grpc_server
        self.forwarder = forwarder
        self.balancer = balancer
        self.runtime = runtime
        self.keys = keys
        self._health = health_servicer
        self.telemetry = telemetry
        self._load_task: asyncio.Task[None] | None = None
        self._key_watch: asyncio.Task[None] | None = None
        self._key_reloads: set[asyncio.Task[bool]] = set()

    async def start(self, load: bool = True) -> None:
        """Start serving and (unless `load` is False) begin loading in the background.

        Health flips to SERVING when loading finishes; with load=False call `load()` yourself.
        """
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        if self.telemetry is not None:
            self.telemetry.start()
        await self.grpc_server.start()
        if self.balancer is not None:
            await self.balancer.start()
        if self.keys is not None:
            interval = self.runtime.settings.auth.keys_reload_interval_s
            self._key_watch = asyncio.create_task(watch_key_file(self.keys, interval))
        if load:
            self.begin_loading()

    def reload_keys(self) -> None:
        """Reload the keys file now (the SIGHUP handler); without one, log that there is none."""
        if self.keys is None:
            logger.warning("reload requested, but no keys file is configured (auth.keys_file)")
            return
        task = asyncio.get_running_loop().create_task(asyncio.to_thread(self.keys.reload))
        self._key_reloads.add(task)
        task.add_done_callback(self._key_reloads.discard)

    def begin_loading(self) -> None:
        """Load the model and indexes in the background."""
        if self._load_task is None:
            self._load_task = asyncio.create_task(self._load())

    async def _load(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            if self.runtime.ready:  # loaded before the port was bound (a reader process)
                await self._serving()
                return
            await loop.run_in_executor(self.runtime.executor, self.runtime.load, loop)
        except Exception:
            logger.exception("loading failed; the server stays NOT_SERVING")
            return
        await self._serving()

    async def _serving(self) -> None:
        if self.balancer is not None:  # the other processes may hand it reads now
            self.balancer.serving()
        await self._set_health(health_pb2.HealthCheckResponse.SERVING)

    async def wait_until_ready(self, timeout: float | None = None) -> None:
        """Wait for loading to finish (raises if it failed)."""
        self.begin_loading()
        assert self._load_task is not None
        await asyncio.wait_for(asyncio.shield(self._load_task), timeout)
        if not self.runtime.ready:
            raise RuntimeError("groundwire failed to load; see the log")

    async def stop(self, grace: float | None = None) -> None:
        """Graceful shutdown: NOT_SERVING, drain RPCs for `grace` seconds, then close indexes."""
        grace = self.runtime.settings.server.shutdown_grace_s if grace is None else grace
        ends = time.monotonic() + grace
        if self.balancer is not None:  # the other processes hand it no more reads
            self.balancer.stopping()
        await self._health.enter_graceful_shutdown()
        await self.grpc_server.stop(grace)
        if self.forwarder is not None:
            await self.forwarder.close()
        if self.balancer is not None:  # what was handed here ends within the same grace
            await self.balancer.close(max(0.0, ends - time.monotonic()))
        if self._key_watch is not None:
            self._key_watch.cancel()
            await asyncio.wait([self._key_watch])
        if self._load_task is not None and not self._load_task.done():
            await asyncio.wait([self._load_task])
        await self.runtime.aclose_generator()
        await asyncio.get_running_loop().run_in_executor(None, self.runtime.close)
        if self.telemetry is not None:
            self.telemetry.stop()
        logger.info("stopped")

    async def wait_for_termination(self) -> None:
        """Block until the gRPC server stops."""
        await self.grpc_server.wait_for_termination()

    async def _set_health(
        self, status: health_pb2.HealthCheckResponse.ServingStatus.ValueType
    ) -> None:
        for service in ("", *SERVICES):
            await self._health.set(service, status)


def create_server(
    settings: Settings, role: ProcessRole = SINGLE, runtime: Runtime | None = None
) -> tuple[GroundwireServer, int]:
    """Build the server bound to settings.server.host:port (port 0 picks a free one).

    `role`: this process's part in a server of several processes (server/process_role.py);
    `runtime`: one already loaded (a reader loads before it binds the shared port)."""
    limit = settings.server.max_message_bytes
    runtime = runtime or Runtime(settings, follower=role.is_reader)
    telemetry = ServerTelemetry(settings, runtime, role)
    grpc_server = grpc.aio.server(
        interceptors=[telemetry.interceptor],
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.max_send_message_length", limit),
            # on only when this server's own processes share the port (server/shared_port.py)
            ("grpc.so_reuseport", 1 if role.shares_port else 0),
        ],
    )
    keys = key_source(settings)
    authenticator = Authenticator(keys)
    forwarder = balancer = None
    wraps: list[Wrap] = []
    if role.is_reader:  # forwards what it does not serve to the primary's private socket
        forwarder = WriteForwarder(f"unix:{role.primary_socket}", READER_RPCS, limit)
        wraps.append(forwarder.wrap)
    if role.shares_port and settings.server.balance_reads:
        board = LoadBoard(role.load_board, role.processes)
        metrics = telemetry.metrics
        handed_over = None if metrics is None else metrics.call_handed_over
        balancer = ReadBalancer(role, board, telemetry.interceptor.wrap, handed_over)
        wraps.append(balancer.handler_for)
    grpc_server.add_generic_rpc_handlers(
        tuple(
            service_handler(
                service,
                implementations,
                authenticator,
                runtime.require_ready,
                wraps=wraps,
            )
            for service, implementations in servicers(runtime).items()
        )
    )
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, grpc_server)
    if settings.server.reflection:
        names = (
            *SERVICES,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        )
        reflection.enable_server_reflection(names, grpc_server)
    address = f"{settings.server.host}:{settings.server.port}"
    credentials = server_credentials(settings)
    if credentials is None:
        port = grpc_server.add_insecure_port(address)
    else:
        port = grpc_server.add_secure_port(address, credentials)
    if port == 0:
        raise OSError(f"could not bind {address}; pick another server.port")
    if role.kind is ProcessKind.PRIMARY:  # where readers forward writes (a 0700 directory)
        if not grpc_server.add_insecure_port(f"unix:{role.primary_socket}"):
            raise OSError(f"could not listen on unix:{role.primary_socket}")
    server = GroundwireServer(
        grpc_server, runtime, health_servicer, keys, telemetry, forwarder, balancer
    )
    return server, port


def key_source(settings: Settings) -> KeyRingFile | None:
    """The keys file (reloaded on change); None, with a loud warning, when auth is off."""
    if not settings.auth.keys_file:
        logger.warning(
            "AUTHENTICATION IS OFF: every caller acts as the admin of tenant 'default'. "
            "Set auth.keys_file (see `groundwire keygen`) before exposing this server"
        )
        return None
    keys = KeyRingFile(Path(settings.auth.keys_file))
    ring = keys.current()
    logger.info("API keys loaded: %d keys for %d tenants", len(ring), len(ring.tenants()))
    return keys


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """TLS (and, with a client CA, mutual TLS) credentials; None for plaintext."""
    server = settings.server
    if not server.tls_cert_file:
        return None
    certificate = _read_pem(server.tls_cert_file, "server.tls_cert_file")
    key = _read_pem(server.tls_key_file, "server.tls_key_file")
    client_ca = (
        _read_pem(server.tls_client_ca_file, "server.tls_client_ca_file")
        if server.tls_client_ca_file
        else None
    )
    logger.info("serving TLS%s", " with client certificates required" if client_ca else "")
    return grpc.ssl_server_credentials(
        [(key, certificate)],
        root_certificates=client_ca,
        require_client_auth=client_ca is not None,
    )


def _read_pem(path: str, field: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidArgument.field(field, f"cannot read {path}: {exc.strerror or exc}") from None
    if b"-----BEGIN " not in data:
        raise InvalidArgument.field(field, f"{path} is not a PEM file")
    return data
