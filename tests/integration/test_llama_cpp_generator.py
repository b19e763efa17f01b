"""LlamaCppGenerator: the packaged Gemma 3 270M run in-process by llama.cpp.

Needs the 'local' extra; the model tests are skipped without it.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncGenerator, Iterator

import pytest

from core.answer.llama_cpp_generator import LlamaCppGenerator, LlamaCppGeneratorConfig
from core.answer.protocol import (
    GenerationEvent,
    GenerationFinished,
    GenerationParams,
    GenerationRequest,
    TextDelta,
)
from core.errors import InvalidArgument, UpstreamFailure
from tests.llm_server import QA_PROMPT, STORY_PROMPT, packaged_gguf_or_skip

pytestmark = pytest.mark.slow


def request(prompt: str, **params: object) -> GenerationRequest:
    return GenerationRequest(prompt, "q", (), GenerationParams(**params))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def generator() -> Iterator[LlamaCppGenerator]:
    """One loaded model for the module; skips when the 'local' extra is not installed."""
    packaged_gguf_or_skip()
    local = LlamaCppGenerator(LlamaCppGeneratorConfig(temperature=0.0))
    yield local
    asyncio.run(local.aclose())


def generate(local: LlamaCppGenerator, req: GenerationRequest) -> list[GenerationEvent]:
    async def drain() -> list[GenerationEvent]:
        return [event async for event in local.stream(req)]

    return asyncio.run(drain())


def split(events: list[GenerationEvent]) -> tuple[str, GenerationFinished]:
    """Deltas then exactly one GenerationFinished, last; returns the text and that event."""
    *deltas, finished = events
    assert isinstance(finished, GenerationFinished)
    assert all(isinstance(event, TextDelta) for event in deltas)
    return "".join(d.text for d in deltas if isinstance(d, TextDelta)), finished


def test_missing_extra_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes the import fail
    with pytest.raises(InvalidArgument) as caught:
        LlamaCppGenerator()
    assert str(caught.value) == (
        "generator.kind: the local generator needs the 'local' extra: "
        "pip install 'groundwire[local]'"
    )


def test_streams_a_completion(generator: LlamaCppGenerator) -> None:
    events = generate(generator, request(QA_PROMPT, max_tokens=24))
    text, finished = split(events)
    assert generator.kind == "local" and generator.model == "gemma-3-270m-q4_k_m"
    assert len(events) >= 3
    assert "Paris" in text
    assert finished.finish_reason in {"stop", "length"}
    assert finished.prompt_tokens > 20
    assert 0 < finished.completion_tokens <= 24


def test_max_tokens_ends_with_length(generator: LlamaCppGenerator) -> None:
    text, finished = split(generate(generator, request(STORY_PROMPT, max_tokens=5)))
    assert text.strip()
    assert finished.finish_reason == "length"


def test_respects_stops(generator: LlamaCppGenerator) -> None:
    events = generate(generator, request("1, 2, 3, 4, 5, 6,", max_tokens=40, stop=(" 9",)))
    text, finished = split(events)
    assert finished.finish_reason == "stop"
    assert text.startswith(" 7") and " 9" not in text


def test_cancel_stops_the_worker_thread(generator: LlamaCppGenerator) -> None:
    async def cancel_after_two_deltas() -> float:
        stream = generator.stream(request(STORY_PROMPT, max_tokens=400, temperature=0.8))
        assert isinstance(stream, AsyncGenerator)
        for _ in range(2):
            assert isinstance(await anext(stream), TextDelta)
        started = time.monotonic()
        await stream.aclose()
        return time.monotonic() - started

    close_s = asyncio.run(cancel_after_two_deltas())
    assert close_s < 1.0  # aclose waited for the thread: it stopped at its next token
    assert not generator.busy
    split(generate(generator, request(QA_PROMPT, max_tokens=4)))  # and the model is free


def test_task_cancellation_stops_the_worker_thread(generator: LlamaCppGenerator) -> None:
    async def cancel_task() -> None:
        seen = asyncio.Event()

        async def consume() -> None:
            async for _ in generator.stream(request(STORY_PROMPT, max_tokens=400)):
                seen.set()

        task = asyncio.create_task(consume())
        await seen.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(cancel_task())
    assert time.monotonic() - started < 5.0
    assert not generator.busy


def test_prompt_longer_than_the_context_is_upstream_failure(generator: LlamaCppGenerator) -> None:
    with pytest.raises(UpstreamFailure) as caught:
        generate(generator, request("word " * 3000, max_tokens=4))
    assert str(caught.value) == "local model gemma-3-270m-q4_k_m failed"
    assert "exceed context window of 2048" in caught.value.reason
