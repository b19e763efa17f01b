"""The extractive generator's shortlist scoring, on real FAQ text, through the real micro-batcher,
against the all-sentences scoring; its setting; empty contexts and cancellation."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from core.answer.citation_check import check_citations
from core.answer.extractive_generator import (
    DEFAULT_CANDIDATES,
    NO_ANSWER,
    ExtractiveGenerator,
    SentenceScoring,
)
from core.answer.protocol import (
    ContextPassage,
    GenerationFinished,
    GenerationRequest,
    TextDelta,
)
from core.answer.sentence_candidates import sentence_candidates
from core.answer.sentence_prefilter import shortlist
from core.context.citations import ContextCitation, parse_citation_tags
from core.embed.micro_batcher import MicroBatchingEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.errors import InvalidArgument
from server.generator_factory import build_generator
from server.settings import load_settings
from tests.unit.test_query_embedding_cache import CountingEmbedder

DESIGN_FAQ = Path(__file__).parents[2] / "server" / "demo_corpus" / "faq-design.md"
SECTIONS = (0, 1, 2, 3, 7, 8)  # indentation, floating point, strings, self, exceptions, switch


def design_passages() -> tuple[ContextPassage, ...]:
    """Six sections of the bundled Design FAQ (heading left out), one passage each."""
    sections = re.split(r"^## ", DESIGN_FAQ.read_text(), flags=re.MULTILINE)[1:]
    return tuple(
        ContextPassage(f"[DOC:design-{n} | CHUNK:design-{n}#0]", sections[n].split("\n", 1)[1])
        for n in SECTIONS
    )


PASSAGES = design_passages()
CONTEXT = tuple(
    ContextCitation(p.tag, *parse_citation_tags(p.tag)[0], section_path=(), source_path="")
    for p in PASSAGES
)


def answer(
    generator: ExtractiveGenerator, query: str, passages: tuple[ContextPassage, ...] = PASSAGES
) -> list[str]:
    """The answer's lines after the notice (or the no-answer line alone)."""

    async def collect() -> str:
        request = GenerationRequest(prompt="", query=query, passages=passages)
        events = [event async for event in generator.stream(request)]
        assert isinstance(events[-1], GenerationFinished)
        return "".join(e.text for e in events if isinstance(e, TextDelta))

    lines = asyncio.run(collect()).splitlines()
    return lines[2:] if len(lines) > 1 else lines


@pytest.mark.parametrize(
    ("query", "section"),
    [
        ("Why are Python strings immutable?", 2),
        ("How fast are exceptions?", 7),
        ("Is floating point arithmetic exact?", 1),
    ],
    ids=["strings", "exceptions", "floating-point"],
)
def test_shortlist_quotes_the_answering_section_first_like_all_sentences(
    embedder: SentenceTransformerEmbedder, query: str, section: int
) -> None:
    assert len(sentence_candidates(PASSAGES)) > 4 * DEFAULT_CANDIDATES  # a real shortlist
    short = answer(ExtractiveGenerator(embedder, scoring=SentenceScoring.SHORTLIST), query)
    every = answer(ExtractiveGenerator(embedder, scoring=SentenceScoring.ALL), query)
    assert short[0] == every[0]
    assert short[0].endswith(f"[DOC:design-{section} | CHUNK:design-{section}#0]")
    report = check_citations("\n".join(short), CONTEXT)
    assert (report.invalid_count, report.faithfulness) == (0, 1.0)


def test_shortlist_embeds_question_and_candidates_in_one_query_call(
    embedder: SentenceTransformerEmbedder,
) -> None:
    counting = CountingEmbedder(embedder)
    query = "How fast are exceptions?"
    generator = ExtractiveGenerator(counting, candidates=6, scoring=SentenceScoring.SHORTLIST)  # type: ignore[arg-type]
    answer(generator, query)
    candidates = sentence_candidates(PASSAGES)
    listed = [candidates[i].text for i in sorted(shortlist(query, candidates, 6))]
    assert counting.query_batches == [[query, *listed]]
    assert counting.document_batches == []


def test_all_sentences_embeds_every_candidate_as_a_document(
    embedder: SentenceTransformerEmbedder,
) -> None:
    counting = CountingEmbedder(embedder)
    query = "How fast are exceptions?"
    generator = ExtractiveGenerator(counting, scoring=SentenceScoring.ALL)  # type: ignore[arg-type]
    answer(generator, query)
    assert counting.document_batches == [[c.text for c in sentence_candidates(PASSAGES)]]
    assert counting.query_batches == [[query]]


def test_through_the_micro_batcher_one_batch_per_answer(
    embedder: SentenceTransformerEmbedder,
) -> None:
    batcher = MicroBatchingEmbedder(embedder, max_batch=64, max_wait_ms=1.0)
    try:
        query = "Why are Python strings immutable?"
        batched = answer(ExtractiveGenerator(batcher, scoring=SentenceScoring.SHORTLIST), query)
        stats = batcher.stats()
        assert (stats.batches, stats.texts) == (1, 1 + DEFAULT_CANDIDATES)
        assert batched == answer(
            ExtractiveGenerator(embedder, scoring=SentenceScoring.SHORTLIST), query
        )
    finally:
        batcher.close()


@pytest.mark.parametrize("scoring", list(SentenceScoring), ids=lambda s: s.value)
def test_context_without_prose_answers_nothing_and_embeds_nothing(
    embedder: SentenceTransformerEmbedder, scoring: SentenceScoring
) -> None:
    counting = CountingEmbedder(embedder)
    code_only = ContextPassage(
        "[DOC:code | CHUNK:code#0]",
        "# Heading only\n```python\nprint('a longer line of code here')\n```\nToo short.\n| a | b |",
    )
    generator = ExtractiveGenerator(counting, scoring=scoring)  # type: ignore[arg-type]
    assert answer(generator, "What does the code print?", (code_only,)) == [NO_ANSWER]
    assert answer(generator, "anything", ()) == [NO_ANSWER]
    assert (counting.query_batches, counting.document_batches) == ([], [])


def test_one_sentence_context_is_quoted_when_similar(
    embedder: SentenceTransformerEmbedder,
) -> None:
    one = ContextPassage("[DOC:one | CHUNK:one#0]", "Sea otters hold hands while they sleep.")
    generator = ExtractiveGenerator(embedder, scoring=SentenceScoring.SHORTLIST)
    lines = answer(generator, "Why do otters hold hands?", (one,))
    assert lines == ["Sea otters hold hands while they sleep. [DOC:one | CHUNK:one#0]"]


def test_closing_the_stream_after_the_first_sentence_stops_it(
    embedder: SentenceTransformerEmbedder,
) -> None:
    generator = ExtractiveGenerator(embedder, scoring=SentenceScoring.SHORTLIST)
    request = GenerationRequest(prompt="", query="How fast are exceptions?", passages=PASSAGES)

    async def first_then_close() -> list[str]:
        stream = generator.stream(request)
        seen = [await anext(stream), await anext(stream)]  # the notice, the first sentence
        await stream.aclose()  # type: ignore[attr-defined]
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
        return [e.text for e in seen if isinstance(e, TextDelta)]

    notice, first = asyncio.run(first_then_close())
    assert first.rstrip("\n") == answer(generator, request.query)[0]


def test_cancelled_while_scoring_leaves_the_batcher_working(
    embedder: SentenceTransformerEmbedder,
) -> None:
    batcher = MicroBatchingEmbedder(embedder, max_batch=64, max_wait_ms=1.0)
    generator = ExtractiveGenerator(batcher, scoring=SentenceScoring.SHORTLIST)
    request = GenerationRequest(prompt="", query="How fast are exceptions?", passages=PASSAGES)

    async def cancel_then_answer() -> list[str]:
        async def consume() -> None:
            async for _ in generator.stream(request):
                pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0)  # the task is now waiting for its embeddings
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        events = [event async for event in generator.stream(request)]
        return [e.text for e in events if isinstance(e, TextDelta)]

    try:
        texts = asyncio.run(cancel_then_answer())
        assert texts[1].endswith("[DOC:design-7 | CHUNK:design-7#0]\n")
    finally:
        batcher.close()


def test_settings_pick_the_scoring_and_shortlist_size(
    embedder: SentenceTransformerEmbedder,
) -> None:
    default = build_generator(load_settings(env={}).generator, embedder)
    assert isinstance(default, ExtractiveGenerator)
    assert default.scoring is SentenceScoring.LEXICAL
    env = {
        "GROUNDWIRE_GENERATOR__EXTRACTIVE_SCORING": "all",
        "GROUNDWIRE_GENERATOR__EXTRACTIVE_CANDIDATES": "12",
    }
    chosen = build_generator(load_settings(env=env).generator, embedder)
    assert isinstance(chosen, ExtractiveGenerator)
    assert chosen.scoring is SentenceScoring.ALL


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"GROUNDWIRE_GENERATOR__EXTRACTIVE_SCORING": "fast"},
            "generator.extractive_scoring: cannot use 'fast' as SentenceScoring; "
            "one of: lexical, shortlist, all",
        ),
        (
            {"GROUNDWIRE_GENERATOR__EXTRACTIVE_CANDIDATES": "3"},
            "generator.extractive_candidates: must be between 4 (the sentences an extractive "
            "answer quotes) and 256",
        ),
    ],
    ids=["unknown-scoring", "too-few-candidates"],
)
def test_invalid_scoring_settings_name_the_fix(env: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        load_settings(env=env)
    assert str(error.value) == message


def test_fewer_candidates_than_sentences_is_refused(embedder: SentenceTransformerEmbedder) -> None:
    with pytest.raises(InvalidArgument) as error:
        ExtractiveGenerator(embedder, max_sentences=4, candidates=3)
    assert str(error.value) == "candidates: must be >= max_sentences (4), got 3"
