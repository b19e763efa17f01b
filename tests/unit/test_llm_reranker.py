"""Tests for the LLM reranker: prompt, reply parsing, fallbacks and the blocking wrapper.

The fallback for a non-JSON reply runs against a real Generator of the repository (the
extractive one). The JSON paths need an upstream that answers in JSON: `ScriptedGenerator`
below stands in for the upstream LLM only (an OpenAI endpoint or llama.cpp would sit there);
everything on our side of the Generator Protocol is the real code.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator, Sequence

import pytest

from core.answer.extractive_generator import ExtractiveGenerator
from core.answer.protocol import (
    GenerationEvent,
    GenerationFinished,
    GenerationParams,
    GenerationRequest,
    TextDelta,
)
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.errors import UpstreamFailure
from core.models import Chunk, Hit, SourceType
from core.retrieve.rerank import ReportingReranker, apply_rerank, run_reranker
from core.retrieve.rerank.llm_ranking import (
    build_rerank_prompt,
    fallback_scores,
    parse_ranking,
    parse_reply,
    scores_from_order,
)
from core.retrieve.rerank.llm_reranker import (
    BLOCKING_ON_LOOP,
    GENERATOR_FAILED,
    REPLY_UNPARSEABLE,
    TIMED_OUT,
    LlmReranker,
)

PASSAGES = [
    "Boil the pasta for ten minutes in salted water, then drain it.",
    "FAISS is a library for efficient similarity search of dense vectors.",
    "Tantivy is a full-text search engine library written in Rust.",
]


class ScriptedGenerator:
    """Test double of the upstream LLM: streams scripted deltas, or raises, and records calls."""

    kind = "openai"
    model = "scripted"

    def __init__(
        self, deltas: Sequence[str] = (), error: Exception | None = None, hang: bool = False
    ) -> None:
        self.deltas = list(deltas)
        self.error = error
        self.hang = hang
        self.requests: list[GenerationRequest] = []
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.sent = 0
        self.closed = False

    async def stream(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        self.requests.append(request)
        self.loops.append(asyncio.get_running_loop())
        try:
            if self.error is not None:
                raise self.error
            if self.hang:
                await asyncio.Event().wait()
            for delta in self.deltas:
                self.sent += 1
                yield TextDelta(delta)
            yield GenerationFinished("stop")
        finally:
            self.closed = True

    async def aclose(self) -> None:
        """Nothing to release."""


# --- prompt and parsing -----------------------------------------------------------------------


def test_prompt_lists_numbered_excerpts_and_asks_for_a_json_array() -> None:
    prompt = build_rerank_prompt(
        "  how to sort? ", ["Use sorted().\n\nIt  returns a new list.", "Tuples."], 600
    )
    assert prompt == (
        "Rank the excerpts by how well they answer the question.\n\n"
        "Question: how to sort?\n\n"
        "Excerpt 1: Use sorted(). It returns a new list.\n"
        "Excerpt 2: Tuples.\n\n"
        "Reply with a JSON array of the excerpt numbers, most relevant first, for example "
        "[2, 1].\n"
        "Ranking: ["
    )


def test_prompt_clips_long_passages_at_a_word_boundary() -> None:
    prompt = build_rerank_prompt("q", ["alpha beta gamma delta epsilon"], 20)
    assert "Excerpt 1: alpha beta gamma…\n" in prompt


@pytest.mark.parametrize(
    ("reply", "order"),
    [
        ("[2, 1, 3]", [1, 0, 2]),
        ("Sure!\n```json\n[3, 1]\n```", [2, 0, 1]),
        ('[5, 2, 2, 0, "1", true, null]', [1, 0, 2]),
        ("[2.0, 1]", [1, 0, 2]),
        ("Excerpt [x] is weak; best: [3]", [2, 0, 1]),
        ("[[], [9], [3, 2]]", [2, 1, 0]),
        ("no array here", None),
        ("[]", None),
        ("[9, 0, -1]", None),
        ("[1.5]", None),
        ("[2, 1", None),
    ],
    ids=[
        "plain",
        "fenced",
        "unknown-duplicate-and-odd-items",
        "integral-float",
        "first-valid-array",
        "nested",
        "no-array",
        "empty",
        "only-unknown",
        "fractional",
        "truncated",
    ],
)
def test_parse_ranking(reply: str, order: list[int] | None) -> None:
    assert parse_ranking(reply, 3) == order


@pytest.mark.parametrize(
    ("reply", "order"),
    [
        ("[3, 1]", [2, 0, 1]),
        ("3, 1]\nQuestion: more text", [2, 0, 1]),
        ("2]", [1, 0, 2]),
        ("The best is 2.", None),
    ],
    ids=["whole-array", "continues-the-bracket", "one-number", "prose"],
)
def test_parse_reply_accepts_a_continuation_of_the_prompt(
    reply: str, order: list[int] | None
) -> None:
    assert parse_reply(reply, 3) == order


def test_scores_from_order() -> None:
    assert scores_from_order([2, 0, 1]) == (2 / 3, 1 / 3, 1.0)
    assert fallback_scores(4) == (1.0, 0.75, 0.5, 0.25)
    assert fallback_scores(0) == ()


# --- async path -------------------------------------------------------------------------------


def test_a_json_reply_orders_the_passages() -> None:
    generator = ScriptedGenerator(["Ranking: [3", ", 1]"])
    reranker = LlmReranker(generator)
    outcome = asyncio.run(reranker.ascore_with_warning("fast vector search", PASSAGES))
    assert outcome.scores == (2 / 3, 1 / 3, 1.0)  # 3 first, then 1, then 2 (left out) appended
    assert outcome.warning == ""
    (request,) = generator.requests
    assert request.prompt == build_rerank_prompt("fast vector search", PASSAGES, 600)
    assert request.query == "fast vector search"
    assert [p.tag for p in request.passages] == ["Excerpt 1", "Excerpt 2", "Excerpt 3"]
    assert [p.text for p in request.passages] == PASSAGES
    assert request.params == GenerationParams(temperature=0.0, max_tokens=28)
    assert reranker.name == "llm:scripted"


def test_a_reply_continuing_the_bracket_is_understood() -> None:
    generator = ScriptedGenerator(["3", ", 1]", "\nQuestion: and more"])
    outcome = asyncio.run(LlmReranker(generator).ascore_with_warning("q", PASSAGES))
    assert (outcome.scores, outcome.warning) == ((2 / 3, 1 / 3, 1.0), "")
    assert generator.sent == 2 and generator.closed


def test_reading_stops_and_the_stream_is_closed_once_a_ranking_arrived() -> None:
    generator = ScriptedGenerator(["[2, 3, 1]", " and then a long explanation", "..."])
    outcome = asyncio.run(LlmReranker(generator).ascore_with_warning("q", PASSAGES))
    assert outcome.scores == (1 / 3, 1.0, 2 / 3)
    assert generator.sent == 1 and generator.closed


def test_an_unparseable_reply_keeps_the_fused_order_with_a_warning() -> None:
    generator = ScriptedGenerator(["I think the second one is best."])
    outcome = asyncio.run(LlmReranker(generator).ascore_with_warning("q", PASSAGES))
    assert outcome.scores == (1.0, 2 / 3, 1 / 3)
    assert outcome.warning == REPLY_UNPARSEABLE


def test_a_generator_failure_keeps_the_fused_order_with_a_warning() -> None:
    generator = ScriptedGenerator(error=UpstreamFailure("upstream returned 503"))
    outcome = asyncio.run(LlmReranker(generator).ascore_with_warning("q", PASSAGES))
    assert outcome.scores == (1.0, 2 / 3, 1 / 3)
    assert outcome.warning == (
        "LLM rerank: the generator failed (upstream returned 503); hits are in fused order"
    )
    assert outcome.warning == GENERATOR_FAILED.format(reason="upstream returned 503")


def test_one_passage_or_none_needs_no_generation() -> None:
    generator = ScriptedGenerator(["[1]"])
    reranker = LlmReranker(generator)
    assert asyncio.run(reranker.ascore("q", ["only"])) == [1.0]
    assert asyncio.run(reranker.ascore("q", [])) == []
    assert generator.requests == []


def test_the_extractive_generator_replies_without_json_so_the_order_is_kept(
    embedder: SentenceTransformerEmbedder,
) -> None:
    reranker = LlmReranker(ExtractiveGenerator(embedder))
    outcome = asyncio.run(reranker.ascore_with_warning("library for vector search", PASSAGES))
    assert outcome == run_reranker(reranker, "library for vector search", PASSAGES)
    assert outcome.scores == fallback_scores(3)
    assert outcome.warning == REPLY_UNPARSEABLE


# --- blocking wrapper -------------------------------------------------------------------------


@pytest.fixture
def loop_thread() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in its own thread, as the gRPC server's loop does."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


def test_blocking_score_runs_on_a_fresh_loop_without_one() -> None:
    generator = ScriptedGenerator(["[2, 1, 3]"])
    reranker = LlmReranker(generator)
    assert isinstance(reranker, ReportingReranker)
    assert reranker.score("q", PASSAGES) == [2 / 3, 1.0, 1 / 3]


def test_blocking_score_runs_on_the_given_running_loop(
    loop_thread: asyncio.AbstractEventLoop,
) -> None:
    generator = ScriptedGenerator(["[3, 2, 1]"])
    reranker = LlmReranker(generator, loop=loop_thread)
    outcome = run_reranker(reranker, "q", PASSAGES)
    assert outcome.scores == (1 / 3, 2 / 3, 1.0)
    assert generator.loops == [loop_thread]


def test_blocking_score_runs_on_a_given_idle_loop() -> None:
    loop = asyncio.new_event_loop()
    try:
        generator = ScriptedGenerator(["[1, 3, 2]"])
        outcome = LlmReranker(generator, loop=loop).score_with_warning("q", PASSAGES)
        assert outcome.scores == (1.0, 1 / 3, 2 / 3)
        assert generator.loops == [loop]
    finally:
        loop.close()


def test_blocking_score_refuses_to_block_a_running_loop() -> None:
    reranker = LlmReranker(ScriptedGenerator(["[1]"]))

    async def call_from_the_loop() -> None:
        reranker.score("q", PASSAGES)

    with pytest.raises(RuntimeError) as caught:
        asyncio.run(call_from_the_loop())
    assert str(caught.value) == BLOCKING_ON_LOOP


def test_blocking_score_refuses_a_closed_loop() -> None:
    loop = asyncio.new_event_loop()
    loop.close()
    with pytest.raises(RuntimeError) as caught:
        LlmReranker(ScriptedGenerator(), loop=loop).score("q", PASSAGES)
    assert str(caught.value) == "the event loop given to LlmReranker is closed"


@pytest.mark.parametrize("on_loop_thread", [False, True], ids=["fresh-loop", "server-loop"])
def test_a_timeout_keeps_the_fused_order_with_a_warning(
    on_loop_thread: bool, loop_thread: asyncio.AbstractEventLoop
) -> None:
    generator = ScriptedGenerator(hang=True)
    loop = loop_thread if on_loop_thread else None
    reranker = LlmReranker(generator, loop=loop, timeout_s=0.05)
    outcome = reranker.score_with_warning("q", PASSAGES)
    assert outcome.scores == fallback_scores(3)
    assert outcome.warning == "LLM rerank: no reply within 0.05 s; hits are in fused order"
    assert outcome.warning == TIMED_OUT.format(seconds=0.05)


def test_a_rerank_abandoned_while_generating_closes_cleanly() -> None:
    """Its loop closed under it (server shutdown): closing the coroutine, as the garbage collector
    does, must not raise from inside the stream it was waiting on."""
    reranker = LlmReranker(ScriptedGenerator(hang=True))
    loop = asyncio.new_event_loop()
    task = loop.create_task(reranker.ascore_with_warning("q", PASSAGES))
    loop.run_until_complete(asyncio.sleep(0.01))
    assert not task.done()
    coroutine = task.get_coro()
    loop.close()
    coroutine.close()  # raised "aclose(): asynchronous generator is already running"
    task._log_destroy_pending = False  # the pending task is the point of the test


def test_reranked_hits_follow_the_llm_order() -> None:
    hits = [
        Hit(
            chunk=Chunk(
                row_id=row,
                chunk_id=f"d#{row}",
                document_id="d",
                ordinal=row,
                text=text,
                section_path=(),
                has_code=False,
                token_estimate=len(text.split()),
                source_type=SourceType.TEXT,
                source_path="d.txt",
            ),
            rank=row,
            score=1.0 / row,
        )
        for row, text in enumerate([*PASSAGES, "Dictionaries map keys to values."], start=1)
    ]
    reranker = LlmReranker(ScriptedGenerator(["[2, 3]"]))
    outcome = run_reranker(reranker, "vector search", [h.chunk.text for h in hits[:3]])
    ranked = apply_rerank(hits, outcome.scores, depth=3)
    assert [h.chunk.row_id for h in ranked] == [2, 3, 1, 4]
