"""A reranker that asks the configured generator (an LLM) to order the passages.

Generation is async (core.answer.protocol.Generator); `ascore_with_warning` is the async path and
`score_with_warning` / `score` the blocking one for the pipeline's worker threads. The blocking
path runs the coroutine on the event loop the generator belongs to (given at construction; an
OpenAI client is bound to the loop it was created on) or, without one, on a fresh loop. It
refuses to run on a thread whose event loop is running, since waiting there would block that
loop. An unparseable reply, a generator failure or a timeout never fails the request: the scores
then keep the fused order and the outcome carries a warning.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import AsyncIterator, Coroutine, Sequence
from typing import Any, TypeVar

from core.answer.protocol import (
    ContextPassage,
    GenerationEvent,
    GenerationParams,
    GenerationRequest,
    Generator,
    TextDelta,
)
from core.errors import DeadlineExceeded, Overloaded, UpstreamFailure
from core.retrieve.rerank.llm_ranking import (
    build_rerank_prompt,
    excerpt_label,
    fallback_scores,
    parse_reply,
    scores_from_order,
)
from core.retrieve.rerank.protocol import RerankOutcome

__all__ = [
    "BLOCKING_ON_LOOP",
    "GENERATOR_FAILED",
    "REPLY_UNPARSEABLE",
    "TIMED_OUT",
    "LlmReranker",
]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

REPLY_UNPARSEABLE = (
    "LLM rerank: the reply held no JSON array of excerpt numbers; hits are in fused order"
)
GENERATOR_FAILED = "LLM rerank: the generator failed ({reason}); hits are in fused order"
TIMED_OUT = "LLM rerank: no reply within {seconds:g} s; hits are in fused order"
BLOCKING_ON_LOOP = (
    "LlmReranker.score() was called on a thread whose event loop is running and would block "
    "it; await ascore() or ascore_with_warning() instead"
)


class LlmReranker:
    """Ranks passages by asking `generator` for a JSON array of excerpt numbers."""

    def __init__(
        self,
        generator: Generator,
        loop: asyncio.AbstractEventLoop | None = None,
        max_passage_chars: int = 600,
        timeout_s: float = 60.0,
    ) -> None:
        if max_passage_chars < 20:
            raise ValueError(f"max_passage_chars must be >= 20, got {max_passage_chars}")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        self._generator = generator
        self._loop = loop
        self._max_passage_chars = max_passage_chars
        self._timeout_s = timeout_s
        self.name = f"llm:{generator.model}"

    async def ascore_with_warning(self, query: str, passages: Sequence[str]) -> RerankOutcome:
        """Scores ((n - position) / n for the LLM's order) and a warning on fallback."""
        count = len(passages)
        if count <= 1:
            return RerankOutcome(fallback_scores(count))
        request = GenerationRequest(
            prompt=build_rerank_prompt(query, passages, self._max_passage_chars),
            query=query,
            passages=tuple(
                ContextPassage(tag=excerpt_label(i), text=text)
                for i, text in enumerate(passages, start=1)
            ),
            params=GenerationParams(temperature=0.0, max_tokens=16 + 4 * count),
        )
        try:
            reply = await _reply_text(self._generator.stream(request), count)
        except (UpstreamFailure, Overloaded, DeadlineExceeded) as exc:
            return _fallback(count, GENERATOR_FAILED.format(reason=exc))
        order = parse_reply(reply, count)
        if order is None:
            return _fallback(count, REPLY_UNPARSEABLE)
        return RerankOutcome(scores_from_order(order))

    async def ascore(self, query: str, passages: Sequence[str]) -> list[float]:
        """The scores of `ascore_with_warning` (a fallback is logged, not returned)."""
        return list(_logged(await self.ascore_with_warning(query, passages)).scores)

    def score_with_warning(self, query: str, passages: Sequence[str]) -> RerankOutcome:
        """Blocking `ascore_with_warning`; RuntimeError when called on a running loop's thread."""
        try:
            return _run_blocking(
                self.ascore_with_warning(query, passages), self._loop, self._timeout_s
            )
        except TimeoutError:
            return _fallback(len(passages), TIMED_OUT.format(seconds=self._timeout_s))

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Blocking scores (a fallback is logged, not returned)."""
        return list(_logged(self.score_with_warning(query, passages)).scores)


def _fallback(count: int, warning: str) -> RerankOutcome:
    return RerankOutcome(fallback_scores(count), warning)


def _logged(outcome: RerankOutcome) -> RerankOutcome:
    if outcome.warning:
        logger.warning("%s", outcome.warning)
    return outcome


async def _reply_text(stream: AsyncIterator[GenerationEvent], count: int) -> str:
    """The generated text, stopping (and closing the stream) once it holds a ranking."""
    parts: list[str] = []
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                parts.append(event.text)
                if "]" in event.text and parse_reply("".join(parts), count) is not None:
                    break
    finally:
        # A stream suspended inside its own await (this coroutine closed while waiting on it,
        # e.g. its loop shut down) cannot be closed from here; its finaliser closes it.
        close = getattr(stream, "aclose", None)
        if close is not None and not getattr(stream, "ag_running", False):
            await close()
    return "".join(parts)


def _run_blocking(
    coroutine: Coroutine[Any, Any, _T], loop: asyncio.AbstractEventLoop | None, timeout_s: float
) -> _T:
    """Run `coroutine` to completion from synchronous code (see the module docstring).

    Raises TimeoutError after `timeout_s` when it runs on another thread's loop (the coroutine
    is cancelled) and RuntimeError when this thread's loop is running or `loop` is closed.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        coroutine.close()
        raise RuntimeError(BLOCKING_ON_LOOP)
    if loop is None:
        return asyncio.run(asyncio.wait_for(coroutine, timeout_s))
    if loop.is_closed():
        coroutine.close()
        raise RuntimeError("the event loop given to LlmReranker is closed")
    if not loop.is_running():
        return loop.run_until_complete(asyncio.wait_for(coroutine, timeout_s))
    future = asyncio.run_coroutine_threadsafe(coroutine, loop)
    try:
        return future.result(timeout_s)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError from None
