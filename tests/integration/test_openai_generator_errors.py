"""OpenAIGenerator against scripted HTTP servers: error mapping, retries, timeouts, secrets.

The streaming and cancellation tests against a real llama.cpp server are in
test_openai_generator.py; these fake servers cover the protocol-level failure cases.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from core.answer.openai_generator import OpenAIGenerator, OpenAIGeneratorConfig
from core.answer.protocol import (
    GenerationEvent,
    GenerationFinished,
    GenerationParams,
    GenerationRequest,
    TextDelta,
)
from core.errors import DeadlineExceeded, Overloaded, UpstreamFailure
from tests.fake_upstream import FakeUpstream, Reply, SilentUpstream, chat_chunk, completion_chunk
from tests.free_port import free_port

REQUEST = GenerationRequest(prompt="Question: why?\nAnswer:", query="why?", passages=())


def run(config: OpenAIGeneratorConfig) -> list[GenerationEvent]:
    """Drain one generation on a fresh event loop and client."""

    async def drain() -> list[GenerationEvent]:
        generator = OpenAIGenerator(config)
        try:
            return [event async for event in generator.stream(REQUEST)]
        finally:
            await generator.aclose()

    return asyncio.run(drain())


def error_json(message: str) -> str:
    return json.dumps({"error": {"message": message, "type": "server_error", "code": None}})


def test_rate_limit_is_retried_then_overloaded_with_retry_after() -> None:
    fake = FakeUpstream(lambda n: Reply(429, error_json("slow down"), {"Retry-After": "1"}))
    started = time.monotonic()
    with pytest.raises(Overloaded) as caught:
        run(OpenAIGeneratorConfig(base_url=fake.base_url, model="m", max_retries=2))
    elapsed = time.monotonic() - started
    fake.close()
    assert str(caught.value) == "upstream model is rate limiting: slow down"
    assert caught.value.retry_after_s == 1.0
    assert fake.hits == 3
    assert 2.0 <= elapsed < 4.0  # two waits of Retry-After = 1 s


def test_server_error_is_retried_with_backoff_and_carries_the_body() -> None:
    fake = FakeUpstream(lambda n: Reply(500, "the model fell over"))
    started = time.monotonic()
    with pytest.raises(UpstreamFailure) as caught:
        run(OpenAIGeneratorConfig(base_url=fake.base_url, model="m", max_retries=2))
    elapsed = time.monotonic() - started
    fake.close()
    assert str(caught.value) == f"upstream model at {fake.base_url} failed with HTTP 500"
    assert caught.value.reason == "the model fell over"
    assert fake.hits == 3
    assert 1.5 <= elapsed < 3.0  # backoff 0.5 s + 1 s


def test_client_error_is_not_retried() -> None:
    fake = FakeUpstream(lambda n: Reply(400, error_json("prompt too long")))
    with pytest.raises(UpstreamFailure) as caught:
        run(OpenAIGeneratorConfig(base_url=fake.base_url, model="m", max_retries=2))
    fake.close()
    assert str(caught.value) == f"upstream model at {fake.base_url} failed with HTTP 400"
    assert caught.value.reason == "prompt too long"
    assert fake.hits == 1


def test_retry_before_the_first_token_then_stream() -> None:
    chunks = [completion_chunk("Be"), completion_chunk("cause.", "stop")]
    fake = FakeUpstream(lambda n: Reply(503, "warming up") if n == 1 else Reply(sse=chunks))
    events = run(OpenAIGeneratorConfig(base_url=fake.base_url, model="m"))
    fake.close()
    assert events == [TextDelta("Be"), TextDelta("cause."), GenerationFinished("stop", 0, 2)]
    assert fake.hits == 2


def test_stream_cut_after_the_first_token_is_not_retried() -> None:
    fake = FakeUpstream(lambda n: Reply(sse=[completion_chunk("Be")], cut=True))
    events: list[GenerationEvent] = []

    async def consume() -> None:
        generator = OpenAIGenerator(OpenAIGeneratorConfig(base_url=fake.base_url, model="m"))
        try:
            async for event in generator.stream(REQUEST):
                events.append(event)
        finally:
            await generator.aclose()

    with pytest.raises(UpstreamFailure) as caught:
        asyncio.run(consume())
    fake.close()
    assert events == [TextDelta("Be")]
    assert str(caught.value) == f"upstream model at {fake.base_url} broke off the stream"
    assert caught.value.reason
    assert fake.hits == 1


def test_silent_upstream_times_out_without_retry() -> None:
    silent = SilentUpstream()
    config = OpenAIGeneratorConfig(base_url=silent.base_url, model="m", timeout_s=1)
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded) as caught:
        run(config)
    elapsed = time.monotonic() - started
    silent.close()
    assert str(caught.value) == f"upstream model at {silent.base_url} did not answer within 1 s"
    assert 0.9 <= elapsed < 2.5


def test_connection_refused_is_unavailable_after_retries(caplog: pytest.LogCaptureFixture) -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(UpstreamFailure) as caught:
        run(OpenAIGeneratorConfig(base_url=base_url, model="m", max_retries=2))
    assert str(caught.value) == f"upstream model at {base_url} is unreachable"
    assert caught.value.reason.startswith("[Errno 111] Connect call failed")
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert [m.split("; ")[-1] for m in retries] == [
        "retry 1 of 2 in 0.5 s",
        "retry 2 of 2 in 1.0 s",
    ]


def test_api_key_is_sent_but_never_shown() -> None:
    fake = FakeUpstream(lambda n: Reply(sse=[completion_chunk("ok", "stop")]))
    host = fake.base_url.removeprefix("http://")
    config = OpenAIGeneratorConfig(base_url=fake.base_url, model="m", api_key="sk-secret-1")
    assert run(config)[-1] == GenerationFinished("stop", 0, 1)
    assert fake.authorization == ["Bearer sk-secret-1"]
    assert "sk-secret-1" not in repr(config)
    fake.close()
    with pytest.raises(UpstreamFailure) as caught:
        run(OpenAIGeneratorConfig(f"http://user:pw-secret@{host}?key=q", "m", max_retries=0))
    assert "secret" not in str(caught.value)


def test_chat_api_sends_one_user_message_and_reads_usage() -> None:
    chunks = [
        chat_chunk(None),
        chat_chunk("Paris"),
        chat_chunk(".", "length"),
        chat_chunk(None, usage=(12, 2)),
    ]
    fake = FakeUpstream(lambda n: Reply(sse=chunks))
    config = OpenAIGeneratorConfig(fake.base_url, "m", api="chat", stop=("\n",))  # type: ignore[arg-type]

    async def drain() -> list[GenerationEvent]:
        generator = OpenAIGenerator(config)
        params = GenerationParams(temperature=0.7, max_tokens=9, stop=("Q:",))
        request = GenerationRequest("the prompt", "q", (), params)
        try:
            return [event async for event in generator.stream(request)]
        finally:
            await generator.aclose()

    events = asyncio.run(drain())
    fake.close()
    assert events == [TextDelta("Paris"), TextDelta("."), GenerationFinished("length", 12, 2)]
    sent = fake.bodies[0]
    assert sent["messages"] == [{"role": "user", "content": "the prompt"}]
    assert (sent["temperature"], sent["max_tokens"], sent["stop"]) == (0.7, 9, ["\n", "Q:"])
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
