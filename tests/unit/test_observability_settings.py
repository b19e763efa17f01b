"""[tracing], [metrics] and [logging] settings: parsed from TOML and environment, bad values
refused with a message naming the setting and the fix."""

from __future__ import annotations

import json
import logging

import pytest

from core.errors import InvalidArgument
from server.request_context import RequestIdFilter, request_id_var
from server.settings import LogFormat, TraceExporter, load_settings
from server.telemetry.json_log_format import JsonFormatter


def test_defaults_leave_tracing_and_metrics_off() -> None:
    settings = load_settings(env={})
    assert settings.tracing.exporter is TraceExporter.NONE
    assert not settings.metrics.enabled
    assert settings.logging.format is LogFormat.TEXT


def test_environment_turns_everything_on() -> None:
    settings = load_settings(
        env={
            "GROUNDWIRE_TRACING__EXPORTER": "otlp_http",
            "GROUNDWIRE_TRACING__ENDPOINT": "https://collector:4318/v1/traces",
            "GROUNDWIRE_TRACING__SAMPLE_RATIO": "0.25",
            "GROUNDWIRE_METRICS__ENABLED": "true",
            "GROUNDWIRE_METRICS__PORT": "9100",
            "GROUNDWIRE_LOGGING__FORMAT": "JSON",
        }
    )
    assert settings.tracing.exporter is TraceExporter.OTLP_HTTP
    assert settings.tracing.sample_ratio == 0.25
    assert settings.metrics.enabled and settings.metrics.port == 9100
    assert settings.logging.format is LogFormat.JSON


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"GROUNDWIRE_TRACING__EXPORTER": "jaeger"},
            "tracing.exporter: cannot use 'jaeger' as TraceExporter; one of: none, console, "
            "otlp_grpc, otlp_http",
        ),
        (
            {"GROUNDWIRE_TRACING__SAMPLE_RATIO": "1.5"},
            "tracing.sample_ratio: must be between 0 and 1 (1 records every trace)",
        ),
        (
            {"GROUNDWIRE_TRACING__ENDPOINT": "collector:4317"},
            "tracing.endpoint: must start with http:// or https://, e.g. "
            "http://otel-collector:4317",
        ),
        (
            {"GROUNDWIRE_METRICS__ENABLED": "true", "GROUNDWIRE_METRICS__PORT": "50051"},
            "metrics.port: must differ from server.port: metrics are served on their own port",
        ),
        (
            {"GROUNDWIRE_LOGGING__FORMAT": "xml"},
            "logging.format: cannot use 'xml' as LogFormat; one of: text, json",
        ),
        (
            {"GROUNDWIRE_LOG_LEVEL": "LOUD"},
            "log_level: must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL",
        ),
    ],
    ids=["exporter", "sample-ratio", "endpoint-scheme", "metrics-port", "log-format", "level"],
)
def test_bad_values_name_the_setting_and_the_fix(env: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        load_settings(env=env)
    assert str(caught.value) == message


def test_json_records_carry_the_request_id_and_exceptions() -> None:
    record = logging.LogRecord("gw.test", logging.ERROR, __file__, 1, "failed %s", ("x",), None)
    token = request_id_var.set("req-7")
    try:
        RequestIdFilter().filter(record)
    finally:
        request_id_var.reset(token)
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    entry = json.loads(JsonFormatter().format(record))
    assert entry["message"] == "failed x" and entry["level"] == "ERROR"
    assert entry["request_id"] == "req-7"
    assert entry["trace_id"] == "-" and entry["span_id"] == "-"  # no span current
    assert entry["logger"] == "gw.test" and entry["time"].endswith("Z")
    assert "ValueError: boom" in entry["exception"]
