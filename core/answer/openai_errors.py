"""Mapping `openai` client failures to domain errors, and when to retry them."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import openai

from core.errors import DeadlineExceeded, Overloaded, UpstreamFailure

BACKOFF_BASE_S = 0.5  # first retry waits this long, each later one twice as long
MAX_RETRY_WAIT_S = 10.0  # cap on a Retry-After we sleep for before retrying
MAX_RETRY_AFTER_S = 60.0  # cap on the retry-after we pass on to our own caller
MAX_REASON_CHARS = 500


def is_retryable(exc: openai.APIError) -> bool:
    """429, 5xx and connection errors are worth retrying; timeouts and other 4xx are not."""
    if isinstance(exc, openai.APITimeoutError):
        return False
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)


def retry_delay(exc: openai.APIError, attempt: int) -> float | None:
    """Seconds to wait before retry number `attempt + 1`, or None when `exc` is final."""
    if not is_retryable(exc):
        return None
    backoff = BACKOFF_BASE_S * 2**attempt
    after = retry_after_s(exc)
    return min(after, MAX_RETRY_WAIT_S) if after is not None else backoff


def retry_after_s(exc: openai.APIError) -> float | None:
    """The Retry-After (or retry-after-ms) header of a status error, in seconds, if any."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = exc.response.headers.get(header)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / divisor)
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
    return None


def map_upstream_error(
    exc: openai.APIError, where: str, timeout_s: float, streaming: bool = False
) -> Exception:
    """The domain error for an `openai` failure; `where` is the redacted base URL."""
    if isinstance(exc, openai.APITimeoutError):
        return DeadlineExceeded(f"upstream model at {where} did not answer within {timeout_s:g} s")
    if isinstance(exc, openai.APIStatusError) and exc.status_code == 429:
        after = retry_after_s(exc)
        return Overloaded(
            f"upstream model is rate limiting: {upstream_reason(exc)}",
            min(after, MAX_RETRY_AFTER_S) if after is not None else 1.0,
        )
    if isinstance(exc, openai.APIStatusError):
        message = f"upstream model at {where} failed with HTTP {exc.status_code}"
    elif isinstance(exc, openai.APIConnectionError):
        broke = "broke off the stream" if streaming else "is unreachable"
        message = f"upstream model at {where} {broke}"
    else:
        message = f"upstream model at {where} sent an error"
    return UpstreamFailure(message, reason=upstream_reason(exc))


def upstream_reason(exc: openai.APIError) -> str:
    """What upstream said: the error message of the body, the body text, or the transport error."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        inner = inner if isinstance(inner, dict) else {"message": inner}
        body = inner.get("message") or inner.get("detail") or body
    if isinstance(exc, openai.APIConnectionError):
        body = _root_cause(exc)
    text = str(body).strip() if body else exc.message
    return text[:MAX_REASON_CHARS]


def redact_url(url: str) -> str:
    """`url` without user info, query or fragment, safe for messages and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host  # IPv6 literal
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _root_cause(exc: BaseException) -> str:
    """The innermost cause of a transport error, e.g. "[Errno 111] Connect call failed"."""
    seen: set[int] = set()
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(exc))
        exc = inner
    return str(exc) or exc.__class__.__name__
