"""Request ids: taken from `x-request-id` metadata or generated, and put on every log record
together with the current trace and span ids."""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import uuid
from typing import Any

import grpc
from opentelemetry import trace

from server.settings import LogFormat
from server.telemetry.json_log_format import JsonFormatter

REQUEST_ID_HEADER = "x-request-id"
request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def request_id_from(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    """The caller's request id when it sent a sane one, else the id this request already has
    (assigned by the telemetry interceptor), else a new one."""
    for key, value in context.invocation_metadata() or ():
        if (
            key == REQUEST_ID_HEADER
            and isinstance(value, str)
            and 0 < len(value) <= 64
            and value.isprintable()
        ):
            return value
    assigned = request_id_var.get()
    return assigned if assigned != "-" else uuid.uuid4().hex[:16]


class RequestIdFilter(logging.Filter):
    """Adds `request_id`, `trace_id` and `span_id` (hex, "-" when none) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            record.trace_id = trace.format_trace_id(span.trace_id)
            record.span_id = trace.format_span_id(span.span_id)
        else:
            record.trace_id = record.span_id = "-"
        return True


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s %(trace_id)s] %(message)s"


def configure_logging(level: str, log_format: LogFormat = LogFormat.TEXT) -> None:
    """Entry-point logging set-up: one stream handler with request and trace ids, as text for
    a terminal or one JSON object per line."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    if log_format is LogFormat.JSON:
        handler.setFormatter(JsonFormatter())
        _disable_progress_bars()  # stderr stays one JSON object per line
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def _disable_progress_bars() -> None:
    """Turn off the model loaders' progress bars (Hugging Face reads the variable at import)."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
