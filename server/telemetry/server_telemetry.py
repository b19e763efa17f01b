"""`ServerTelemetry`: the tracing provider, metrics and metrics endpoint one server runs with.

The endpoint serves this process's registry; the primary of several processes serves every
process's series instead, each labelled with its process (server/telemetry/process_metrics.py).
"""

from __future__ import annotations

import logging
from wsgiref.simple_server import WSGIServer

from opentelemetry.sdk.trace import TracerProvider
from prometheus_client import CollectorRegistry, start_wsgi_server

from server.process_role import SINGLE, ProcessKind, ProcessRole
from server.runtime import Runtime
from server.settings import Settings
from server.telemetry.process_metrics import ProcessMetrics, ReaderMetricsPorts
from server.telemetry.rpc_interceptor import TelemetryInterceptor
from server.telemetry.runtime_collector import RuntimeCollector
from server.telemetry.server_metrics import ServerMetrics
from server.telemetry.tracing_setup import install_tracing

logger = logging.getLogger(__name__)


class ServerTelemetry:
    """Built from settings with the runtime; `start()` opens the metrics port, `stop()` closes
    it and flushes spans still waiting for export."""

    def __init__(self, settings: Settings, runtime: Runtime, role: ProcessRole = SINGLE) -> None:
        self._settings = settings
        self._provider: TracerProvider | None = install_tracing(settings.tracing)
        self.metrics: ServerMetrics | None = None
        self._exposed: CollectorRegistry | None = None
        self._processes: ProcessMetrics | None = None
        if settings.metrics.enabled:
            self.metrics = ServerMetrics()
            self.metrics.registry.register(RuntimeCollector(runtime))
            self._exposed = self.metrics.registry
            if role.kind is ProcessKind.PRIMARY:  # serves every process's series
                self._processes = ProcessMetrics(self.metrics.registry)
                self._exposed = CollectorRegistry()
                self._exposed.register(self._processes)
        self.interceptor = TelemetryInterceptor(self.metrics, skip_forwarded=role.shares_port)
        self._endpoint: WSGIServer | None = None
        self.metrics_port = 0
        """The bound metrics port once started (0 when metrics are off)."""

    def scrape_readers(self, readers: ReaderMetricsPorts) -> None:
        """The primary's reader processes, whose series its endpoint serves too."""
        if self._processes is not None:
            self._processes.readers = readers

    def start(self) -> None:
        """Serve GET /metrics when metrics are enabled."""
        if self._exposed is None or self._endpoint is not None:
            return
        config = self._settings.metrics
        try:
            self._endpoint, _ = start_wsgi_server(
                config.port, addr=config.host, registry=self._exposed
            )
        except OSError as exc:
            raise OSError(
                f"could not bind the metrics endpoint {config.host}:{config.port} ({exc}); "
                "pick another metrics.port or set metrics.enabled = false"
            ) from exc
        self.metrics_port = self._endpoint.server_port
        logger.info("metrics on http://%s:%d/metrics", config.host, self.metrics_port)

    def stop(self) -> None:
        """Close the metrics endpoint and flush the tracing provider this server installed."""
        if self._endpoint is not None:
            self._endpoint.shutdown()
            self._endpoint.server_close()
            self._endpoint = None
        if self._provider is not None:
            self._provider.shutdown()
            self._provider = None
