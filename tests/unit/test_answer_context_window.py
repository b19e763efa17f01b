"""AnswerService fits its prompt into the generator's context window: real pipeline, real model.

The window counts with the real embedding tokenizer, or with a multiple of it that the first
budget guess underestimates, so the service has to correct its budget with a second retrieval.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.answer.answer_service import AnswerRequest, AnswerService
from core.answer.context_window import ContextWindow
from core.answer.events import AnswerEvent, AnswerStarted, AnswerSummary
from core.answer.prompts import PromptLibrary, default_prompts_dir
from core.answer.protocol import (
    GenerationEvent,
    GenerationFinished,
    GenerationParams,
    GenerationRequest,
    TextDelta,
)
from core.context.budget import ContextBudget
from core.embed.protocol import Embedder
from core.errors import InvalidArgument
from core.models import Document
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest
from tests.llm_server import garden_guides
from tests.unit.pipeline_support import indexed_pipeline

QUESTION = "How are the garden plants watered and fed?"
WIDE = ContextBudget(max_tokens=4000)  # more than any window below can hold


class RecordingGenerator:
    """Records each request and answers with one sentence citing the first passage."""

    kind = "recording"
    model = "recording-1"

    def __init__(self) -> None:
        self.requests: list[GenerationRequest] = []

    async def stream(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        self.requests.append(request)
        yield TextDelta(f"Water them daily. {request.passages[0].tag}")
        yield GenerationFinished("stop")

    async def aclose(self) -> None:
        return None


@pytest.fixture(scope="module")
def pipeline(
    embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RetrievalPipeline]:
    data_dir = Path(tmp_path_factory.mktemp("window-data"))
    docs = [Document(doc_id, text) for doc_id, text in garden_guides(plants=8, sentences=8)]
    with indexed_pipeline(embedder, data_dir, "garden", docs) as built:
        yield built


def _answer(
    pipeline: RetrievalPipeline,
    window: ContextWindow | None,
    budget: ContextBudget = WIDE,
    max_tokens: int | None = None,
) -> tuple[list[AnswerEvent], RecordingGenerator]:
    generator = RecordingGenerator()
    prompts = PromptLibrary.load(default_prompts_dir())
    request = AnswerRequest(
        RetrievalRequest(query=QUESTION, collection="garden", top_k=8, budget=budget),
        params=GenerationParams(max_tokens=max_tokens),
    )
    with ThreadPoolExecutor(1) as pool:
        service = AnswerService(lambda: pipeline, generator, prompts, pool, window)

        async def collect() -> list[AnswerEvent]:
            return [event async for event in service.answer(request)]

        return asyncio.run(collect()), generator


def _window(tokens: int, output: int, count: Callable[[str], int]) -> ContextWindow:
    return ContextWindow(tokens, output, count, "counted in test units")


def _started(events: list[AnswerEvent]) -> AnswerStarted:
    started = events[0]
    assert isinstance(started, AnswerStarted) and isinstance(events[-1], AnswerSummary)
    return started


def test_without_a_window_the_requested_budget_is_used(pipeline: RetrievalPipeline) -> None:
    events, generator = _answer(pipeline, None)
    started = _started(events)
    assert started.budget == ContextBudget(max_tokens=4000)
    assert started.retrieval.context.token_estimate > 600  # all eight plants fit in 4,000
    assert not any("lowered" in w for w in started.retrieval.warnings)
    assert len(generator.requests) == 1


def test_prompt_and_answer_fit_the_window(pipeline: RetrievalPipeline, embedder: Embedder) -> None:
    window = _window(600, 100, embedder.count_tokens)
    events, generator = _answer(pipeline, window)
    started = _started(events)
    prompt = generator.requests[0].prompt
    assert embedder.count_tokens(prompt) + 100 <= 600
    assert started.budget.max_tokens is not None and started.budget.max_tokens < 4000
    assert started.retrieval.context.budget_limit == started.budget.max_tokens
    assert started.retrieval.context.citations, "the fitted context still holds passages"
    assert started.retrieval.context.text in prompt
    (warning,) = [w for w in started.retrieval.warnings if "lowered" in w]
    assert f"from 4000 tokens to {started.budget.max_tokens} tokens" in warning
    assert "600-token context window" in warning


def test_a_generator_that_counts_more_is_fitted_by_a_second_retrieval(
    pipeline: RetrievalPipeline, embedder: Embedder
) -> None:
    counts: list[int] = []

    def double(text: str) -> int:  # twice the budget unit: the first guess overflows
        counts.append(2 * embedder.count_tokens(text))
        return counts[-1]

    events, generator = _answer(pipeline, _window(900, 100, double))
    started = _started(events)
    assert double(generator.requests[0].prompt) + 100 <= 900
    assert any(count + 100 > 900 for count in counts), "the first guess did overflow"
    assert started.retrieval.context.citations


def test_the_request_max_tokens_takes_the_place_of_the_default(
    pipeline: RetrievalPipeline, embedder: Embedder
) -> None:
    window = _window(1000, 100, embedder.count_tokens)
    events, generator = _answer(pipeline, window, max_tokens=500)
    _started(events)
    assert embedder.count_tokens(generator.requests[0].prompt) + 500 <= 1000


def test_a_budget_inside_the_room_is_kept(pipeline: RetrievalPipeline, embedder: Embedder) -> None:
    window = _window(2048, 100, embedder.count_tokens)
    events, _ = _answer(pipeline, window, budget=ContextBudget(max_tokens=300))
    started = _started(events)
    assert started.budget == ContextBudget(max_tokens=300)
    assert not any("lowered" in w for w in started.retrieval.warnings)


def test_a_character_budget_is_fitted_too(pipeline: RetrievalPipeline, embedder: Embedder) -> None:
    window = _window(500, 100, embedder.count_tokens)
    events, generator = _answer(pipeline, window, budget=ContextBudget(max_chars=50_000))
    started = _started(events)
    assert started.budget.max_chars is not None and started.budget.max_chars < 50_000
    assert embedder.count_tokens(generator.requests[0].prompt) + 100 <= 500


def test_no_room_for_context_is_invalid_argument_and_nothing_is_generated(
    pipeline: RetrievalPipeline, embedder: Embedder
) -> None:
    window = _window(200, 150, embedder.count_tokens)
    with pytest.raises(InvalidArgument) as raised:
        _answer(pipeline, window)
    assert raised.value.violations[0].field == "max_tokens"
    assert "context window is 200 tokens" in str(raised.value)


def test_a_prompt_that_never_fits_names_the_budget(pipeline: RetrievalPipeline) -> None:
    def huge_with_context(text: str) -> int:
        return 10**6 if "compost" in text else len(text.split())

    with pytest.raises(InvalidArgument) as raised:
        _answer(pipeline, _window(2048, 100, huge_with_context))
    assert raised.value.violations[0].field == "retrieve.budget"
    assert "no retrieved passage fits the generator's 2048-token context window" in str(
        raised.value
    )


def test_passages_are_the_text_the_prompt_holds(
    pipeline: RetrievalPipeline, embedder: Embedder
) -> None:
    window = _window(500, 100, embedder.count_tokens)  # room for less than one whole chunk
    events, generator = _answer(pipeline, window)
    context = _started(events).retrieval.context
    request = generator.requests[0]
    assert context.summarised_hits + context.truncated_hits > 0, "the window shortened a chunk"
    assert [p.tag for p in request.passages] == [c.tag for c in context.citations]
    for passage in request.passages:
        assert passage.text in request.prompt  # not the whole chunk the context left out
