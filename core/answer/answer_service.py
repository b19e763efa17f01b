"""Answer: retrieve, choose a template, render the prompt, stream the generator, check citations."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import Executor
from dataclasses import dataclass

from core.answer.citation_check import check_citations
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
from core.answer.template_selection import select_template
from core.models import Hit
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest, RetrievalResult


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    """A validated answer request."""

    retrieval: RetrievalRequest
    template: str = ""
    params: GenerationParams = GenerationParams()
    rewrite: bool = False


class AnswerService:
    """Streams grounded answers. Closing the stream stops generation upstream."""

    def __init__(
        self,
        pipeline: Callable[[], RetrievalPipeline],
        generator: Generator,
        prompts: PromptLibrary,
        executor: Executor,
    ) -> None:
        self._pipeline = pipeline
        self._generator = generator
        self._prompts = prompts
        self._executor = executor

    @property
    def generator(self) -> Generator:
        """The configured generator."""
        return self._generator

    async def answer(self, request: AnswerRequest) -> AsyncGenerator[AnswerEvent, None]:
        """AnswerStarted, then AnswerDelta events, then one AnswerSummary."""
        started = time.perf_counter()
        queries = (
            await rewrite_query(self._generator, request.retrieval.query) if request.rewrite else ()
        )
        result = await self._retrieve(request.retrieval, queries)
        retrieval_ms = _ms(started)
        included = _included_hits(result)
        template = select_template(
            request.template, [h.chunk.has_code for h in included], self._prompts.names()
        )
        yield AnswerStarted(result, template)
        generation = GenerationRequest(
            prompt=self._prompts.render(template, request.retrieval.query, result.context.text),
            query=request.retrieval.query,
            passages=tuple(
                ContextPassage(c.tag, h.chunk.text, h.chunk.section_path)
                for c, h in zip(result.context.citations, included, strict=True)
            ),
            params=request.params,
        )
        parts: list[str] = []
        first_token_ms: float | None = None
        finished = GenerationFinished("stop")
        async for event in self._generator.stream(generation):
            if isinstance(event, TextDelta):
                if first_token_ms is None:
                    first_token_ms = _ms(started)
                parts.append(event.text)
                yield AnswerDelta(event.text)
            else:
                finished = event
        text = "".join(parts)
        report = check_citations(text, result.context.citations)
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

    async def _retrieve(
        self, request: RetrievalRequest, queries: tuple[str, ...]
    ) -> RetrievalResult:
        pipeline = self._pipeline()
        loop = asyncio.get_running_loop()
        if len(queries) > 1:
            return await loop.run_in_executor(
                self._executor, pipeline.retrieve_many, request, queries
            )
        return await loop.run_in_executor(self._executor, pipeline.retrieve, request)


def _included_hits(result: RetrievalResult) -> list[Hit]:
    """The hits whose text is in the context, in context order."""
    by_row = {h.chunk.row_id: h for h in result.hits}
    return [by_row[row_id] for row_id in result.context.included_row_ids]


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000.0
