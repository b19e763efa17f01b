"""One retrieval as a chain of worker-thread steps that wakes the event loop once.

`RetrievalPipeline.retrieve_async` awaits three things on the event loop (the stages before the
query embedding, the embedding, the stages after it), and the lexical search is one more hand-off
to a pool. Each completion from another thread is a `call_soon_threadsafe` (a self-pipe write and
an event-loop wake-up). Here the steps hand over to each other directly:

1. a worker runs `begin` (collection, cache, preprocessing), enqueues the query embedding, then
   runs the lexical search itself while the model works;
2. whichever of the two finishes last runs `finish`: the worker straight after its lexical search,
   or, when the embedding's batch thread is last, a worker the step is submitted to (the batch
   thread never runs pipeline stages);
3. `finish`'s result completes the one future the caller awaits.

No thread waits for the model meanwhile. Cancelling the returned future before `finish` starts
skips the remaining steps and drops a queued embedding. Every step runs in a copy of the context
`start_chain` was called in (request id, current span, telemetry sink).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, InvalidStateError
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from opentelemetry import trace

from core.errors import Overloaded
from core.observe.stage_timer import StageTimer

S = TypeVar("S")  # what `begin` hands on
R = TypeVar("R")  # the result
Ranking = list[tuple[int, float]]


@dataclass(frozen=True, slots=True)
class ChainSteps(Generic[S, R]):
    """What the chain runs. `begin` returns the state the other steps continue from, or the
    finished result (`finished` tells which: a cached result, a lexical-only request); `embed`
    enqueues the query embedding and returns its future; `timer` is the state's stage timer;
    `lexical` runs the lexical search (None when the request has none); `finish` gets the
    lexical ranking and the done embedding future (a result or the model's exception)."""

    begin: Callable[[], S | R]
    finished: Callable[[S | R], bool]
    embed: Callable[[S], Future[Any]]
    timer: Callable[[S], StageTimer]
    lexical: Callable[[S], Ranking | None]
    finish: Callable[[S, Ranking | None, Future[Any]], R]


def start_chain(steps: ChainSteps[S, R], executor: Executor) -> Future[R]:
    """Start the chain on `executor`; the future completes with `finish`'s result (or the first
    exception a step raised)."""
    chain = _Chain(steps, executor)
    chain.submit(chain.begin)
    return chain.outcome


class _Chain(Generic[S, R]):
    """The state one chain's steps share; `_waiting` counts the lexical search and the
    embedding still running."""

    def __init__(self, steps: ChainSteps[S, R], executor: Executor) -> None:
        self.outcome: Future[R] = Future()
        self._steps = steps
        self._executor = executor
        self._context = contextvars.copy_context()
        self._lock = threading.Lock()
        self._waiting = 2
        self._state: S | None = None
        self._lexical: Ranking | None = None
        self._embedding: Future[Any] | None = None
        self._embed_stage: AbstractContextManager[Any] | None = None

    def submit(self, step: Callable[[], None]) -> None:
        """Run `step` on a worker, in a copy of the caller's context."""
        try:
            self._executor.submit(self._context.copy().run, self._guarded, step)
        except BaseException as exc:  # noqa: BLE001 - a shut-down executor fails the request
            _fail(self.outcome, exc)

    def _guarded(self, step: Callable[[], None]) -> None:
        if self.outcome.cancelled():
            return
        try:
            step()
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting caller
            self._end_embed_stage()
            _fail(self.outcome, exc)

    def begin(self) -> None:
        steps = self._steps
        state = steps.begin()
        if steps.finished(state):
            _settle(self.outcome, cast(R, state))
            return
        started = cast(S, state)
        self._state = started
        self._embedding = self._enqueue(started)
        self.outcome.add_done_callback(self._drop_embedding)
        self._embedding.add_done_callback(self._embedded)
        self._lexical = steps.lexical(started)
        self._arrive(inline=True)

    def _enqueue(self, started: S) -> Future[Any]:
        """The embedding's future, timed as the `embed` stage until `finish` starts (as the
        awaited path's stage lasts until the event loop resumes it; a recording stage span gets
        the batch size and queue wait). The batch thread only hands over: it is the model's
        one thread, so per-request work there would delay the next batch. A failure to enqueue
        other than `Overloaded` becomes a failed future: `finish` falls back to BM25 as for a
        failed batch."""
        stage = self._steps.timer(started).stage("embed", current=False)
        span = stage.__enter__()
        self._embed_stage = stage
        try:
            with trace.use_span(span, end_on_exit=False):
                embedding = self._steps.embed(started)
        except Overloaded:
            raise  # `_guarded` ends the stage
        except Exception as exc:  # noqa: BLE001 - any model failure degrades to BM25
            embedding = Future()
            embedding.set_exception(exc)
        return embedding

    def _end_embed_stage(self) -> None:
        """End the `embed` stage once (whichever of finish, failure, cancellation comes first)."""
        with self._lock:
            stage, self._embed_stage = self._embed_stage, None
        if stage is not None:
            stage.__exit__(None, None, None)

    def _drop_embedding(self, outcome: Future[R]) -> None:
        if outcome.cancelled() and self._embedding is not None:
            self._embedding.cancel()  # queued: never embedded; running: its rows are discarded
            self._end_embed_stage()

    def _embedded(self, _: Future[Any]) -> None:
        self._arrive(inline=False)

    def _arrive(self, *, inline: bool) -> None:
        """One half done; the last one runs `finish` (on this worker when `inline`)."""
        with self._lock:
            self._waiting -= 1
            last = self._waiting == 0
        if not last:
            return
        if inline:
            self._finish()
        else:
            self.submit(self._finish)

    def _finish(self) -> None:
        assert self._state is not None and self._embedding is not None
        self._end_embed_stage()
        if self._embedding.cancelled():
            return  # only the caller's cancellation cancels it
        _settle(self.outcome, self._steps.finish(self._state, self._lexical, self._embedding))


def _settle(outcome: Future[R], result: R) -> None:
    try:
        outcome.set_result(result)
    except InvalidStateError:  # cancelled meanwhile: nobody waits for it
        pass


def _fail(outcome: Future[Any], exc: BaseException) -> None:
    try:
        outcome.set_exception(exc)
    except InvalidStateError:
        pass
