"""AnswerService over a real collection, with a scripted generator whose reply cites a fabricated chunk."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from core.answer.answer_service import AnswerRequest, AnswerService
from core.answer.events import AnswerDelta, AnswerEvent, AnswerStarted, AnswerSummary
from core.answer.prompts import PromptLibrary, default_prompts_dir
from core.answer.protocol import GenerationEvent, GenerationFinished, GenerationRequest, TextDelta
from core.embed.micro_batcher import MicroBatchingEmbedder
from core.embed.protocol import Embedder
from core.models import Document
from core.retrieve.pipeline import Offload, RetrievalPipeline
from core.retrieve.request import RetrievalRequest
from tests.conftest import BACKENDS, backend_factory
from tests.unit.pipeline_support import indexed_pipeline

DOCS = [
    Document("tea.md", "# Tea\n\nGreen tea is steeped at 80 degrees for two minutes."),
    Document("coffee.md", "# Coffee\n\nEspresso is brewed at nine bars of pressure."),
]


class ScriptedGenerator:
    """Replies with fixed text built from the request's passages (a stand-in for an LLM's reply)."""

    kind = "scripted"
    model = "scripted-1"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[GenerationRequest] = []

    async def stream(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        self.requests.append(request)
        real = request.passages[0].tag
        for piece in self.reply.format(real=real).split("|SPLIT|"):
            yield TextDelta(piece)
        yield GenerationFinished("stop", prompt_tokens=120, completion_tokens=30)

    async def aclose(self) -> None:
        return None


@pytest.fixture(scope="module", params=BACKENDS)
def pipeline(
    request: pytest.FixtureRequest, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RetrievalPipeline]:
    """A pipeline over DOCS on each storage backend."""
    data_dir = Path(tmp_path_factory.mktemp("answer-data"))
    backend = backend_factory(request.param, request)()
    with indexed_pipeline(embedder, data_dir, "docs", DOCS, backend) as built:
        yield built


def _run(service: AnswerService, query: str) -> list[AnswerEvent]:
    async def collect() -> list[AnswerEvent]:
        request = AnswerRequest(RetrievalRequest(query=query, collection="docs", top_k=2))
        return [event async for event in service.answer(request)]

    return asyncio.run(collect())


def test_fabricated_citation_is_removed_and_counted(pipeline: RetrievalPipeline) -> None:
    reply = "Steep green tea at 80 degrees. {real}|SPLIT| Add milk. [DOC:milk.md | CHUNK:milk.md#7]"
    generator = ScriptedGenerator(reply)
    with ThreadPoolExecutor(1) as pool:
        service = AnswerService(
            lambda: pipeline, generator, PromptLibrary.load(default_prompts_dir()), pool
        )
        events = _run(service, "At what temperature is green tea steeped?")
    started, summary = events[0], events[-1]
    assert isinstance(started, AnswerStarted) and isinstance(summary, AnswerSummary)
    assert [type(e) for e in events[1:-1]] == [AnswerDelta, AnswerDelta]
    assert summary.invalid_citations == 1
    assert [c.chunk_id for c in summary.citations] == ["tea.md#0"]
    assert summary.faithfulness == pytest.approx(0.5)
    assert (summary.generator, summary.model) == ("scripted", "scripted-1")
    assert (summary.prompt_tokens, summary.completion_tokens) == (120, 30)


def test_prompt_holds_the_context_and_the_question(pipeline: RetrievalPipeline) -> None:
    generator = ScriptedGenerator("Fine. {real}")
    with ThreadPoolExecutor(1) as pool:
        service = AnswerService(
            lambda: pipeline, generator, PromptLibrary.load(default_prompts_dir()), pool
        )
        _run(service, "How is espresso brewed?")
    prompt = generator.requests[0].prompt
    assert "How is espresso brewed?" in prompt
    assert "[DOC:coffee.md | CHUNK:coffee.md#0]" in prompt
    assert generator.requests[0].passages[0].tag == "[DOC:coffee.md | CHUNK:coffee.md#0]"


class RewritingGenerator(ScriptedGenerator):
    """Answers rewrite prompts with two search queries, and everything else like ScriptedGenerator."""

    async def stream(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        if not request.passages and "Search queries:" in request.prompt:
            self.requests.append(request)
            yield TextDelta("1. espresso brewing pressure\n- green tea steeping temperature\n")
            yield GenerationFinished("stop")
            return
        async for event in super().stream(request):
            yield event


def test_rewrite_retrieves_each_query_and_fuses(pipeline: RetrievalPipeline) -> None:
    generator = RewritingGenerator("Both. {real}")
    with ThreadPoolExecutor(1) as pool:
        service = AnswerService(
            lambda: pipeline, generator, PromptLibrary.load(default_prompts_dir()), pool
        )

        async def collect() -> list[AnswerEvent]:
            request = AnswerRequest(
                RetrievalRequest(query="Tell me about hot drinks", collection="docs", top_k=2),
                rewrite=True,
            )
            return [event async for event in service.answer(request)]

        events = asyncio.run(collect())
    started, summary = events[0], events[-1]
    assert isinstance(started, AnswerStarted) and isinstance(summary, AnswerSummary)
    assert summary.rewritten_queries == (
        "Tell me about hot drinks",
        "espresso brewing pressure",
        "green tea steeping temperature",
    )
    assert {h.chunk.document_id for h in started.retrieval.hits} == {"tea.md", "coffee.md"}
    assert any(stage.startswith("q2.") for stage, _ in started.retrieval.timings)


def test_awaited_retrieval_grounds_the_answer_alike(embedder: Embedder, tmp_path: Path) -> None:
    """With `offload`, retrieval goes through `retrieve_async` (the query embedding awaited on
    the loop through the micro-batcher, the other stages offloaded): the same answer as the
    grounding run on a worker thread."""
    batcher = MicroBatchingEmbedder(embedder, max_batch=8, max_wait_ms=1.0)
    generator = ScriptedGenerator("Fine. {real}")
    calls: list[str] = []
    prompts = PromptLibrary.load(default_prompts_dir())
    request = AnswerRequest(
        RetrievalRequest(query="How is espresso brewed?", collection="docs", top_k=2)
    )
    with (
        indexed_pipeline(batcher, tmp_path, "docs", DOCS) as pipeline,
        ThreadPoolExecutor(1) as pool,
    ):
        service = AnswerService(lambda: pipeline, generator, prompts, pool)

        async def offload(fn: Callable[..., Any], *args: Any) -> Any:
            calls.append(fn.__name__)
            return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)

        async def collect(through: Offload | None) -> list[AnswerEvent]:
            return [event async for event in service.answer(request, through)]

        try:
            by_thread = asyncio.run(collect(None))
            before = batcher.stats().batches
            by_loop = asyncio.run(collect(offload))
            assert batcher.stats().batches == before + 1
        finally:
            batcher.close()
    assert calls == ["_begin", "_finish"]
    assert generator.requests[0] == generator.requests[1]
    first, second = by_thread[-1], by_loop[-1]
    assert isinstance(first, AnswerSummary) and isinstance(second, AnswerSummary)
    assert (first.text, first.citations) == (second.text, second.citations)
