"""The OpenTelemetry SDK tracer provider chosen by `[tracing]` settings, installed process-wide.

With `exporter = "none"` nothing is installed: the API stays a no-op and spans cost nothing. A
provider already installed by the host process (an embedding application, a test) is left alone
and used as it is.
"""

from __future__ import annotations

import logging

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

from server.settings import TraceExporter, TracingSettings

logger = logging.getLogger(__name__)

DEFAULT_GRPC_ENDPOINT = "http://127.0.0.1:4317"
DEFAULT_HTTP_ENDPOINT = "http://127.0.0.1:4318/v1/traces"
VERSION = "0.1.0"


def build_exporter(settings: TracingSettings) -> SpanExporter | None:
    """The span exporter the settings name; None for "none"."""
    if settings.exporter is TraceExporter.CONSOLE:
        return ConsoleSpanExporter(service_name=settings.service_name)
    if settings.exporter is TraceExporter.OTLP_GRPC:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcExporter,
        )

        endpoint = settings.endpoint or DEFAULT_GRPC_ENDPOINT
        return GrpcExporter(endpoint=endpoint, insecure=endpoint.startswith("http://"))
    if settings.exporter is TraceExporter.OTLP_HTTP:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )

        return HttpExporter(endpoint=settings.endpoint or DEFAULT_HTTP_ENDPOINT)
    return None


def install_tracing(settings: TracingSettings) -> TracerProvider | None:
    """Install an SDK provider exporting as configured; returns it (None when nothing was
    installed: tracing is off, or the process already has a provider)."""
    exporter = build_exporter(settings)
    if exporter is None:
        return None
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        logger.warning(
            "tracing: this process already has a tracer provider; using it and ignoring "
            "tracing.exporter=%s",
            settings.exporter.value,
        )
        return None
    provider = TracerProvider(
        resource=Resource.create({SERVICE_NAME: settings.service_name, SERVICE_VERSION: VERSION}),
        sampler=ParentBased(TraceIdRatioBased(settings.sample_ratio)),
    )
    console = settings.exporter is TraceExporter.CONSOLE
    provider.add_span_processor(
        SimpleSpanProcessor(exporter) if console else BatchSpanProcessor(exporter)
    )
    trace.set_tracer_provider(provider)
    logger.info(
        "tracing: exporting spans via %s%s (sample ratio %.2f)",
        settings.exporter.value,
        f" to {settings.endpoint}" if settings.endpoint else "",
        settings.sample_ratio,
    )
    return provider
