"""Request ids: taken from `x-request-id` metadata or generated, and put on every log record."""

from __future__ import annotations

import contextvars
import logging
import uuid
from typing import Any

import grpc

REQUEST_ID_HEADER = "x-request-id"
request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def request_id_from(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    """The caller's request id when it sent a sane one, else a new one."""
    for key, value in context.invocation_metadata() or ():
        if (
            key == REQUEST_ID_HEADER
            and isinstance(value, str)
            and 0 < len(value) <= 64
            and value.isprintable()
        ):
            return value
    return uuid.uuid4().hex[:16]


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every record so formats can print it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True


def configure_logging(level: str) -> None:
    """Entry-point logging set-up: one stream handler with request ids."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
