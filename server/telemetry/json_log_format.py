"""`JsonFormatter`: one JSON object per log record, for log shippers (Loki, Elasticsearch, ...).

Fields: `time` (UTC, ISO 8601 with milliseconds), `level`, `logger`, `message`, `request_id`,
`trace_id`, `span_id` (as `RequestIdFilter` set them; "-" outside a request or trace),
`thread`, and `exception` (the formatted traceback) when there is one.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime


class JsonFormatter(logging.Formatter):
    """Formats records as single-line JSON objects."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as JSON (the message with its arguments applied)."""
        stamp = datetime.fromtimestamp(record.created, UTC)
        entry: dict[str, object] = {
            "time": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
            "trace_id": getattr(record, "trace_id", "-"),
            "span_id": getattr(record, "span_id", "-"),
            "thread": record.threadName,
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, ensure_ascii=False, default=str)
