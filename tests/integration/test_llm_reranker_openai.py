"""LlmReranker through the real OpenAIGenerator against a scripted OpenAI-compatible endpoint.

The generator is created on an event loop running in its own thread, as in the server, and the
reranker's blocking path (run from this thread, as a pipeline worker would) submits to it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from core.answer.openai_generator import OpenAIGenerator, OpenAIGeneratorConfig
from core.retrieve.rerank import run_reranker
from core.retrieve.rerank.llm_ranking import build_rerank_prompt
from core.retrieve.rerank.llm_reranker import LlmReranker
from tests.fake_upstream import FakeUpstream, Reply, completion_chunk

PASSAGES = ["Pasta needs salted water.", "FAISS searches dense vectors.", "Tantivy ranks BM25."]


@pytest.fixture
def server_loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


def make_generator(loop: asyncio.AbstractEventLoop, base_url: str) -> OpenAIGenerator:
    async def create() -> OpenAIGenerator:
        return OpenAIGenerator(OpenAIGeneratorConfig(base_url, model="m", max_retries=0))

    return asyncio.run_coroutine_threadsafe(create(), loop).result()


def close(loop: asyncio.AbstractEventLoop, generator: OpenAIGenerator) -> None:
    asyncio.run_coroutine_threadsafe(generator.aclose(), loop).result()


def test_streamed_json_ranking_reorders(server_loop: asyncio.AbstractEventLoop) -> None:
    sse = [completion_chunk(" [2"), completion_chunk(", 3, 1]"), completion_chunk("", "stop")]
    fake = FakeUpstream(lambda n: Reply(sse=sse))
    generator = make_generator(server_loop, fake.base_url)
    try:
        outcome = run_reranker(LlmReranker(generator, loop=server_loop), "vectors", PASSAGES)
    finally:
        close(server_loop, generator)
        fake.close()
    assert outcome.scores == (1 / 3, 1.0, 2 / 3)
    assert outcome.warning == ""
    (body,) = fake.bodies
    assert body["prompt"] == build_rerank_prompt("vectors", PASSAGES, 600)
    assert (body["temperature"], body["max_tokens"]) == (0.0, 28)


def test_an_upstream_error_keeps_the_fused_order(server_loop: asyncio.AbstractEventLoop) -> None:
    fake = FakeUpstream(lambda n: Reply(500, "the model fell over"))
    generator = make_generator(server_loop, fake.base_url)
    try:
        outcome = run_reranker(LlmReranker(generator, loop=server_loop), "vectors", PASSAGES)
    finally:
        close(server_loop, generator)
        fake.close()
    assert outcome.scores == (1.0, 2 / 3, 1 / 3)
    assert outcome.warning == (
        f"LLM rerank: the generator failed (upstream model at {fake.base_url} failed with "
        "HTTP 500); hits are in fused order"
    )
