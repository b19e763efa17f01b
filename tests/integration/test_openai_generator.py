"""OpenAIGenerator against a real OpenAI-compatible server: llama.cpp's, serving Gemma 3 270M.

Needs the 'local' extra (llama-cpp-python[server] and the packaged model); skipped without it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path

import pytest

from core.answer.openai_generator import OpenAIGenerator, OpenAIGeneratorConfig
from core.answer.protocol import (
    GenerationEvent,
    GenerationFinished,
    GenerationParams,
    GenerationRequest,
    TextDelta,
)
from core.errors import UpstreamFailure
from tests.fake_upstream import TcpProxy
from tests.llm_server import QA_PROMPT, STORY_PROMPT, LlamaServer, packaged_gguf_or_skip

pytestmark = pytest.mark.slow

MODEL = "gemma-3-270m"


def request(prompt: str, **params: object) -> GenerationRequest:
    return GenerationRequest(prompt, "q", (), GenerationParams(**params))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def gguf() -> Path:
    """The packaged Gemma GGUF; skips when the 'local' extra is not installed."""
    return packaged_gguf_or_skip()


@pytest.fixture(scope="module")
def llama_server(gguf: Path) -> Iterator[LlamaServer]:
    """One llama.cpp server for the module."""
    with LlamaServer(gguf) as server:
        yield server


def config(base_url: str, **changes: object) -> OpenAIGeneratorConfig:
    fields: dict[str, object] = {"temperature": 0.0, **changes}
    return OpenAIGeneratorConfig(base_url, MODEL, **fields)  # type: ignore[arg-type]


def generate(cfg: OpenAIGeneratorConfig, req: GenerationRequest) -> list[GenerationEvent]:
    async def drain() -> list[GenerationEvent]:
        generator = OpenAIGenerator(cfg)
        try:
            return [event async for event in generator.stream(req)]
        finally:
            await generator.aclose()

    return asyncio.run(drain())


def assert_well_formed(events: list[GenerationEvent]) -> tuple[str, GenerationFinished]:
    """Deltas then exactly one GenerationFinished, last; returns the text and that event."""
    *deltas, finished = events
    assert isinstance(finished, GenerationFinished)
    assert all(isinstance(event, TextDelta) for event in deltas)
    return "".join(d.text for d in deltas if isinstance(d, TextDelta)), finished


def test_streams_deltas_then_one_finished(llama_server: LlamaServer) -> None:
    events = generate(config(llama_server.base_url), request(QA_PROMPT, max_tokens=24))
    text, finished = assert_well_formed(events)
    assert len(events) >= 3  # streamed: several deltas
    assert "Paris" in text
    assert finished.finish_reason in {"stop", "length"}
    assert 0 < finished.completion_tokens <= 24


def test_max_tokens_ends_with_length(llama_server: LlamaServer) -> None:
    events = generate(config(llama_server.base_url), request(STORY_PROMPT, max_tokens=5))
    text, finished = assert_well_formed(events)
    assert text.strip()
    assert finished.finish_reason == "length"
    assert 1 <= finished.completion_tokens <= 5


def test_stops_from_config_and_request_are_merged(llama_server: LlamaServer) -> None:
    cfg = config(llama_server.base_url, stop=("\n",))
    events = generate(cfg, request("1, 2, 3, 4, 5, 6,", max_tokens=40, stop=(" 9",)))
    text, finished = assert_well_formed(events)
    assert finished.finish_reason == "stop"
    assert " 9" not in text and "\n" not in text
    assert text.startswith(" 7")


def test_cancel_mid_stream_closes_the_upstream_request(llama_server: LlamaServer) -> None:
    proxy = TcpProxy(llama_server.port)
    cfg = config(proxy.base_url, temperature=0.8)

    async def cancel_after_two_deltas() -> float:
        generator = OpenAIGenerator(cfg)
        stream = generator.stream(request(STORY_PROMPT, max_tokens=400))
        assert isinstance(stream, AsyncGenerator)
        for _ in range(2):
            assert isinstance(await anext(stream), TextDelta)
        cancelled_at = time.monotonic()
        await stream.aclose()
        await generator.aclose()
        return cancelled_at

    cancelled_at = asyncio.run(cancel_after_two_deltas())
    deadline = time.monotonic() + 2.0
    while not proxy.upstream_closed_at and time.monotonic() < deadline:
        time.sleep(0.01)
    proxy.close()
    assert proxy.connections == 1
    assert proxy.upstream_closed_at, "the upstream connection was not closed within 2 s"
    assert proxy.upstream_closed_at[0] - cancelled_at < 2.0
    # llama.cpp's server noticed the disconnect and stopped generating, and serves again.
    assert llama_server.wait_for_log("Disconnected from client", timeout_s=5.0)
    events = generate(config(llama_server.base_url), request(QA_PROMPT, max_tokens=4))
    assert_well_formed(events)


def test_server_killed_mid_stream_is_upstream_failure(gguf: Path) -> None:
    server = LlamaServer(gguf)
    cfg = config(server.base_url, temperature=0.8, max_retries=1)
    received: list[GenerationEvent] = []

    async def consume() -> None:
        generator = OpenAIGenerator(cfg)
        try:
            async for event in generator.stream(request(STORY_PROMPT, max_tokens=400)):
                received.append(event)
                if len(received) == 2:
                    server.kill()
        finally:
            await generator.aclose()

    with server, pytest.raises(UpstreamFailure) as caught:
        asyncio.run(consume())
    assert str(caught.value) == f"upstream model at {server.base_url} broke off the stream"
    assert caught.value.reason
    assert len(received) >= 2
    with pytest.raises(UpstreamFailure) as again:
        generate(cfg, request(QA_PROMPT, max_tokens=4))
    assert str(again.value) == f"upstream model at {server.base_url} is unreachable"
