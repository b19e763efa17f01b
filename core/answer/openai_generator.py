"""A generator for any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp's server)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import Enum

import openai
from openai.types import Completion, CompletionUsage
from openai.types.chat import ChatCompletionChunk

from core.answer.openai_errors import (
    is_retryable,
    map_upstream_error,
    redact_url,
    retry_delay,
    upstream_reason,
)
from core.answer.protocol import GenerationEvent, GenerationFinished, GenerationRequest, TextDelta
from core.errors import InvalidArgument, UpstreamFailure

log = logging.getLogger(__name__)

EMPTY_STREAM_HINT = (
    "servers such as llama.cpp's close the stream this way when the prompt does not fit the "
    "model's context window; set generator.context_window_tokens to the window the endpoint "
    "serves so prompts are fitted to it"
)

_Upstream = openai.AsyncStream[Completion] | openai.AsyncStream[ChatCompletionChunk]


class OpenAIApi(str, Enum):
    """Which endpoint to call: `completions` (base models) or `chat` (instruction models)."""

    COMPLETIONS = "completions"
    CHAT = "chat"


@dataclass(frozen=True, slots=True)
class OpenAIGeneratorConfig:
    """Where the model lives and its sampling defaults; requests may override the defaults."""

    base_url: str  # e.g. "http://127.0.0.1:8000/v1"
    model: str
    api_key: str = field(default="", repr=False)  # "" for servers that need none
    api: OpenAIApi = OpenAIApi.COMPLETIONS  # chat sends the prompt as one user message
    temperature: float = 0.2
    max_tokens: int = 256
    timeout_s: float = 60.0  # bound on connecting and on each wait for upstream bytes
    max_retries: int = 2  # retries on 429, 5xx and connection errors before the first token
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "api", OpenAIApi(self.api))
        except ValueError:
            raise InvalidArgument.field(
                "generator.api", 'must be "completions" or "chat"'
            ) from None
        checks = (
            ("generator.base_url", bool(self.base_url), "must be set, e.g. http://host:8000/v1"),
            ("generator.model", bool(self.model), "must name the upstream model"),
            ("generator.temperature", self.temperature >= 0, "must be 0 or more"),
            ("generator.max_tokens", self.max_tokens > 0, "must be more than 0"),
            ("generator.timeout_s", self.timeout_s > 0, "must be more than 0"),
            ("generator.max_retries", self.max_retries >= 0, "must be 0 or more"),
        )
        for name, ok, fix in checks:
            if not ok:
                raise InvalidArgument.field(name, fix)


@dataclass(frozen=True, slots=True)
class _Piece:
    """One upstream chunk, whichever endpoint sent it."""

    text: str
    finish_reason: str | None
    usage: CompletionUsage | None


class OpenAIGenerator:
    """Streams completions from an OpenAI-compatible server; retries only before the first token."""

    kind = "openai"

    def __init__(self, config: OpenAIGeneratorConfig) -> None:
        self.config = config
        self.model = config.model
        self._where = redact_url(config.base_url)
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "not-needed",
            timeout=config.timeout_s,
            max_retries=0,
        )

    async def stream(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        """Yield TextDelta events, then exactly one GenerationFinished; closing stops upstream."""
        upstream, piece = await self._start(request)
        try:
            finish_reason: str | None = None
            usage: CompletionUsage | None = None
            deltas = 0
            while piece is not None:
                if piece.text:
                    deltas += 1
                    yield TextDelta(piece.text)
                finish_reason = piece.finish_reason or finish_reason
                usage = piece.usage or usage
                piece = await self._next(upstream, streaming=True)
            if finish_reason is None and deltas == 0:
                raise UpstreamFailure(
                    f"upstream model at {self._where} ended the stream without any text or a "
                    f"finish reason; {EMPTY_STREAM_HINT}"
                )
            if finish_reason is None:
                log.warning(
                    "upstream model at %s ended a stream without a finish reason", self._where
                )
            yield GenerationFinished(
                finish_reason=finish_reason or "stop",
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else deltas,
            )
        finally:
            await upstream.close()  # closes the HTTP response at once, also on cancel/aclose

    async def aclose(self) -> None:
        """Close the HTTP client and its connections."""
        await self._client.close()

    async def _start(self, request: GenerationRequest) -> tuple[_Upstream, _Piece | None]:
        """Open the stream and read its first chunk, retrying transient failures with backoff."""
        attempt = 0
        while True:
            upstream: _Upstream | None = None
            try:
                upstream = await self._create(request)
                return upstream, await self._next(upstream, streaming=False)
            except _Retryable as exc:
                if upstream is not None:
                    await upstream.close()
                delay = (
                    retry_delay(exc.cause, attempt) if attempt < self.config.max_retries else None
                )
                if delay is None:
                    raise exc.error from exc.cause
                attempt += 1
                log.warning(
                    "upstream model at %s failed (%s); retry %d of %d in %.1f s",
                    self._where, upstream_reason(exc.cause), attempt, self.config.max_retries, delay,
                )  # fmt: skip
                await asyncio.sleep(delay)
            except BaseException:
                if upstream is not None:
                    await upstream.close()
                raise

    async def _create(self, request: GenerationRequest) -> _Upstream:
        """Send the request; raises _Retryable or a domain error when it fails."""
        cfg, params = self.config, request.params
        temperature = cfg.temperature if params.temperature is None else params.temperature
        max_tokens = cfg.max_tokens if params.max_tokens is None else params.max_tokens
        stops = list(dict.fromkeys(cfg.stop + params.stop))
        stop: list[str] | openai.Omit = stops if stops else openai.omit
        try:
            if cfg.api is OpenAIApi.CHAT:
                return await self._client.chat.completions.create(
                    model=cfg.model,
                    messages=[{"role": "user", "content": request.prompt}],
                    temperature=temperature,
                    max_tokens=max_tokens,
                    stop=stop,
                    stream=True,
                    stream_options={"include_usage": True},
                )
            return await self._client.completions.create(
                model=cfg.model,
                prompt=request.prompt,
                temperature=temperature,
                max_tokens=max_tokens,
                stop=stop,
                stream=True,
                stream_options={"include_usage": True},  # servers that ignore it: deltas counted
            )
        except openai.APIError as exc:
            raise self._failure(exc, streaming=False) from exc

    async def _next(self, upstream: _Upstream, *, streaming: bool) -> _Piece | None:
        """The next chunk or None at the end; upstream errors become domain errors."""
        try:
            chunk: Completion | ChatCompletionChunk | None = await anext(upstream, None)
            return None if chunk is None else _piece(chunk)
        except openai.APIError as exc:
            raise self._failure(exc, streaming=streaming) from exc

    def _failure(self, exc: openai.APIError, *, streaming: bool) -> Exception:
        """The domain error to raise, wrapped in _Retryable when a retry may help."""
        error = map_upstream_error(exc, self._where, self.config.timeout_s, streaming)
        return error if streaming or not is_retryable(exc) else _Retryable(exc, error)


class _Retryable(Exception):
    """Internal: a failure before the first token that may be retried."""

    def __init__(self, cause: openai.APIError, error: Exception) -> None:
        super().__init__(str(error))
        self.cause = cause
        self.error = error


def _piece(chunk: Completion | ChatCompletionChunk) -> _Piece:
    """The text, finish reason and usage of one upstream chunk."""
    if isinstance(chunk, ChatCompletionChunk):
        text = "".join(c.delta.content or "" for c in chunk.choices)
    else:
        text = "".join(c.text or "" for c in chunk.choices)
    reasons = [c.finish_reason for c in chunk.choices if c.finish_reason]
    return _Piece(text, reasons[0] if reasons else None, chunk.usage)
