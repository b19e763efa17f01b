"""Answer: retrieve, choose a template, render the prompt, stream the generator, check citations.

With a `ContextWindow` the prompt is fitted to the generator: the retrieval budget is capped by the
room the template, question and answer length leave, and lowered again (a new retrieval) while
the rendered prompt, counted as the generator counts it, does not fit (`context_window`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, replace

from core.answer.citation_check import check_citations
from core.answer.context_window import (
    MAX_FIT_ATTEMPTS,
    MIN_CONTEXT_TOKENS,
    ContextWindow,
    budget_lowered_warning,
    first_budget,
    no_fit_error,
    no_room_error,
    smaller_budget,
)
from core.answer.events import AnswerDelta, AnswerEvent, AnswerStarted, AnswerSummary
from core.answer.prompts import PromptLibrary
from core.answer.protocol import (
    ContextPassage,
    GenerationFinished,
    GenerationParams,
    GenerationRequest,
    Generator,
    TextDelta,
)
from core.answer.query_rewrite import rewrite_query
from core.answer.template_selection import CODE_TEMPLATE, DEFAULT_TEMPLATE, select_template
from core.context.budget import ContextBudget
from core.models import Hit
from core.observe import attributes
from core.observe.stage_timer import StageTimer
from core.observe.telemetry_sink import current_sink
from core.observe.tracing import in_this_context
from core.retrieve.pipeline import Offload, RetrievalPipeline
from core.retrieve.request import RetrievalRequest, RetrievalResult


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    """A validated answer request."""

    retrieval: RetrievalRequest
    template: str = ""
    params: GenerationParams = GenerationParams()
    rewrite: bool = False


@dataclass(frozen=True, slots=True)
class _Grounding:
    """The retrieval an answer rests on, the template chosen and the prompt rendered from them."""

    result: RetrievalResult
    template: str
    prompt: str
    budget: ContextBudget  # the budget the retrieval applied (lowered to fit a context window)


class AnswerService:
    """Streams grounded answers. Closing the stream stops generation upstream."""

    def __init__(
        self,
        pipeline: Callable[[], RetrievalPipeline],
        generator: Generator,
        prompts: PromptLibrary,
        executor: Executor,
        window: ContextWindow | None = None,
    ) -> None:
        """`window`: the generator's context window, when it has one that prompts must fit."""
        self._pipeline = pipeline
        self._generator = generator
        self._prompts = prompts
        self._executor = executor
        self._window = window

    @property
    def generator(self) -> Generator:
        """The configured generator."""
        return self._generator

    async def answer(
        self,
        request: AnswerRequest,
        offload: Offload | None = None,
        waiting: Offload | None = None,
    ) -> AsyncGenerator[AnswerEvent, None]:
        """AnswerStarted, then AnswerDelta events, then one AnswerSummary.

        `offload`: when given, a single-query retrieval without a context window to fit goes
        through `RetrievalPipeline.retrieve_async` with it and `waiting` (the query embedding is
        awaited on the loop, so a stream waiting for its embedding batch holds no worker thread);
        otherwise the whole grounding runs on the executor.
        """
        started = time.perf_counter()
        timer = StageTimer("answer")
        sink = current_sink()
        queries = (
            await rewrite_query(self._generator, request.retrieval.query) if request.rewrite else ()
        )
        if offload is not None and self._window is None and len(queries) <= 1:
            result = await self._pipeline().retrieve_async(request.retrieval, offload, waiting)
            grounding = self._render(request, result, request.retrieval.budget, timer)
        else:
            loop = asyncio.get_running_loop()
            grounding = await loop.run_in_executor(
                self._executor, in_this_context(self._ground, request, queries, timer)
            )
        result = grounding.result
        retrieval_ms = _ms(started)
        included = _included_hits(result)
        yield AnswerStarted(result, grounding.template, grounding.budget)
        generation = GenerationRequest(
            prompt=grounding.prompt,
            query=request.retrieval.query,
            passages=tuple(
                ContextPassage(c.tag, placed, h.chunk.section_path)
                for c, h, placed in zip(
                    result.context.citations, included, result.context.passages, strict=True
                )
            ),
            params=request.params,
        )
        parts: list[str] = []
        first_token_ms: float | None = None
        finished = GenerationFinished("stop")
        kind, model = self._generator.kind, self._generator.model
        generator_attributes = {attributes.GENERATOR: kind, attributes.MODEL: model}
        with timer.stage("generate", generator_attributes, current=False) as generating:
            async for event in self._generator.stream(generation):
                if isinstance(event, TextDelta):
                    if first_token_ms is None:
                        first_token_ms = _ms(started)
                    parts.append(event.text)
                    yield AnswerDelta(event.text)
                else:
                    finished = event
            if generating.is_recording():
                generating.set_attributes(_generation_attributes(finished, first_token_ms))
        if sink is not None:
            first_token_s = None if first_token_ms is None else first_token_ms / 1000.0
            sink.generation_finished(
                kind, first_token_s, finished.prompt_tokens, finished.completion_tokens
            )
        text = "".join(parts)
        with timer.stage("citation_check") as checking:
            report = check_citations(text, result.context.citations)
            checking.set_attributes(
                {
                    attributes.CITATIONS: len(report.valid),
                    attributes.INVALID_CITATIONS: report.invalid_count,
                }
            )
        timings = (
            ("retrieval", retrieval_ms),
            ("first_token", first_token_ms or 0.0),
            ("total", _ms(started)),
        )
        yield AnswerSummary(
            finish_reason=finished.finish_reason,
            prompt_tokens=finished.prompt_tokens,
            completion_tokens=finished.completion_tokens,
            citations=report.valid,
            invalid_citations=report.invalid_count,
            faithfulness=report.faithfulness,
            generator=self._generator.kind,
            model=self._generator.model,
            timings=timings,
            rewritten_queries=queries,
            text=text,
        )

    def _ground(
        self, request: AnswerRequest, queries: tuple[str, ...], timer: StageTimer
    ) -> _Grounding:
        """Worker thread: retrieve, choose the template and render the prompt, fitted to the
        context window when there is one."""
        if self._window is None:
            result = self._retrieve(request.retrieval, queries)
            return self._render(request, result, request.retrieval.budget, timer)
        return self._ground_fitted(request, queries, self._window, timer)

    def _ground_fitted(
        self,
        request: AnswerRequest,
        queries: tuple[str, ...],
        window: ContextWindow,
        timer: StageTimer,
    ) -> _Grounding:
        """`_ground` with the budget capped, then lowered, until the prompt fits `window`."""
        query = request.retrieval.query
        output = request.params.max_tokens or window.output_tokens
        fixed = {
            name: window.count(self._prompts.render(name, query, ""))
            for name in self._template_candidates(request)
        }
        widest = max(fixed.values())
        if window.room(widest, output) < MIN_CONTEXT_TOKENS:
            raise no_room_error(window, widest, output)
        requested = request.retrieval.budget
        budget = tried = first_budget(requested, window.room(widest, output), window)
        for attempt in range(1, MAX_FIT_ATTEMPTS + 1):
            result = self._retrieve(replace(request.retrieval, budget=budget), queries)
            grounding = self._render(request, result, budget, timer)
            prompt_tokens = window.count(grounding.prompt)
            if prompt_tokens + output <= window.tokens:
                if budget == requested:
                    return grounding
                if result.hits and not result.context.citations:
                    raise no_fit_error(window, budget, attempt)  # not even a cut passage fits
                warning = budget_lowered_warning(requested, budget, window, output)
                fitted = replace(result, warnings=(*result.warnings, warning))
                return replace(grounding, result=fitted)
            template_tokens = fixed.get(grounding.template, widest)
            room = window.room(template_tokens, output)
            tried, budget = budget, smaller_budget(budget, prompt_tokens - template_tokens, room)
        raise no_fit_error(window, tried, MAX_FIT_ATTEMPTS)

    def _template_candidates(self, request: AnswerRequest) -> tuple[str, ...]:
        """Templates `select_template` may pick for this request."""
        if request.template:
            return (request.template,)
        names = self._prompts.names()
        return tuple(name for name in (DEFAULT_TEMPLATE, CODE_TEMPLATE) if name in names)

    def _render(
        self,
        request: AnswerRequest,
        result: RetrievalResult,
        budget: ContextBudget,
        timer: StageTimer,
    ) -> _Grounding:
        with timer.stage("prompt") as rendering:
            included = _included_hits(result)
            template = select_template(
                request.template, [h.chunk.has_code for h in included], self._prompts.names()
            )
            prompt = self._prompts.render(template, request.retrieval.query, result.context.text)
            rendering.set_attribute(attributes.TEMPLATE, template)
        return _Grounding(result, template, prompt, budget)

    def _retrieve(self, request: RetrievalRequest, queries: tuple[str, ...]) -> RetrievalResult:
        pipeline = self._pipeline()
        if len(queries) > 1:
            return pipeline.retrieve_many(request, queries)
        return pipeline.retrieve(request)


def _included_hits(result: RetrievalResult) -> list[Hit]:
    """The hits whose text is in the context, in context order."""
    by_row = {h.chunk.row_id: h for h in result.hits}
    return [by_row[row_id] for row_id in result.context.included_row_ids]


def _generation_attributes(
    finished: GenerationFinished, first_token_ms: float | None
) -> attributes.Attributes:
    """Token counts, finish reason and time to first token of a finished generation."""
    values: attributes.Attributes = {
        attributes.INPUT_TOKENS: finished.prompt_tokens,
        attributes.OUTPUT_TOKENS: finished.completion_tokens,
        attributes.FINISH_REASON: finished.finish_reason,
    }
    if first_token_ms is not None:
        values[attributes.FIRST_TOKEN_MS] = first_token_ms
    return values


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000.0
