"""The asyncio Answer stream: `async for` over typed events, cancel, read the final summary."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from types import TracebackType

import grpc

from groundwire.answer_events import AnswerEvent, AnswerStarted, TokenDelta, event_from_response
from groundwire.answer_state import AnswerState
from groundwire.errors import GroundwireError
from groundwire.v1 import retrieval_service_pb2 as rs


class AsyncAnswerStream:
    """Async-iterates the events of one Answer call (the call starts at the first iteration).

    `cancel()` stops the call on the server; iteration then ends quietly. Cancelling the task
    that iterates cancels the call as well. After the stream is exhausted, `summary`,
    `citations` and `text` hold the final answer. Failures raise GroundwireError.
    """

    def __init__(
        self,
        open_responses: Callable[
            [Callable[[grpc.aio.Call], None]], AsyncIterator[rs.AnswerResponse]
        ],
    ) -> None:
        """`open_responses(attach)` returns the responses and passes each attempt's call to attach."""
        self._state = AnswerState()
        self._call: grpc.aio.Call | None = None
        self._done = False
        self._responses = open_responses(self.attach)

    def attach(self, call: grpc.aio.Call) -> None:
        """Called with the gRPC call of each attempt (so that `cancel` reaches it)."""
        self._call = call
        if self._state.cancelled:
            call.cancel()

    def __aiter__(self) -> AsyncAnswerStream:
        return self

    async def __anext__(self) -> AnswerEvent:
        if self._done or self._state.cancelled:
            raise StopAsyncIteration
        try:
            response = await self._responses.__anext__()
        except StopAsyncIteration:
            self._done = True
            raise
        except asyncio.CancelledError:
            self._done = True
            if self._state.cancelled:
                raise StopAsyncIteration from None
            self.cancel()
            raise
        except GroundwireError as error:
            self._done = True
            if self._state.cancelled and error.code is grpc.StatusCode.CANCELLED:
                raise StopAsyncIteration from None
            raise
        event = event_from_response(response)
        self._state.record(event)
        return event

    async def tokens(self) -> AsyncIterator[str]:
        """Only the answer text, piece by piece."""
        async for event in self:
            if isinstance(event, TokenDelta):
                yield event.text

    async def until_done(self) -> rs.AnswerSummary:
        """Read the rest of the stream and return the summary."""
        async for _ in self:
            pass
        if self._state.summary is None:
            raise GroundwireError(
                grpc.StatusCode.CANCELLED if self._state.cancelled else grpc.StatusCode.INTERNAL,
                "the Answer stream ended without a summary",
            )
        return self._state.summary

    def cancel(self) -> None:
        """Cancel the call; iteration ends. Safe to call more than once."""
        self._state.cancelled = True
        if self._call is not None:
            self._call.cancel()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel()` was called."""
        return self._state.cancelled

    @property
    def started(self) -> AnswerStarted | None:
        """The first event (retrieved context), once received."""
        return self._state.started

    @property
    def text(self) -> str:
        """The answer text received so far."""
        return self._state.text

    @property
    def summary(self) -> rs.AnswerSummary | None:
        """The final summary, once received."""
        return self._state.summary

    @property
    def citations(self) -> list[rs.Citation]:
        """The validated citations, once the summary has been received."""
        return self._state.citations

    async def __aenter__(self) -> AsyncAnswerStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if not self._done:
            self.cancel()
        await self._responses.aclose()  # type: ignore[attr-defined]
