"""Tests for core.answer.extractive_generator with the real embedding model."""

from __future__ import annotations

import asyncio

import pytest

from core.answer.citation_check import check_citations
from core.answer.extractive_generator import (
    EXTRACTIVE_NOTICE,
    NO_ANSWER,
    ExtractiveGenerator,
    SentenceScoring,
)
from core.answer.protocol import (
    ContextPassage,
    GenerationEvent,
    GenerationFinished,
    GenerationParams,
    GenerationRequest,
    Generator,
    TextDelta,
)
from core.context.citations import ContextCitation, parse_citation_tags
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder

FAISS = ContextPassage(
    tag="[DOC:faiss | CHUNK:faiss#0]",
    text=(
        "# FAISS\n"
        "FAISS is a library for efficient similarity search of dense vectors.\n"
        "It supports indexes that live on a GPU for faster search.\n"
        "```python\nimport faiss  # a library for similarity search of dense vectors\n```\n"
        "| Index | Use |\n|---|---|\n"
        "Short line here."
    ),
)
TANTIVY = ContextPassage(
    tag="[DOC:tantivy | CHUNK:tantivy#2]",
    text="- Tantivy is a full-text search engine library written in Rust.\n- It ranks with BM25.",
)
PASTA = ContextPassage(
    tag="[DOC:pasta | CHUNK:pasta#1]",
    text="Boil the pasta for ten minutes in salted water, then drain it and add the sauce.",
)
PASSAGES = (PASTA, FAISS, TANTIVY)
CONTEXT = tuple(
    ContextCitation(p.tag, *parse_citation_tags(p.tag)[0], section_path=(), source_path="")
    for p in PASSAGES
)


def run(
    generator: ExtractiveGenerator, query: str, max_tokens: int | None = None
) -> list[GenerationEvent]:
    request = GenerationRequest(
        prompt="unused",
        query=query,
        passages=PASSAGES,
        params=GenerationParams(max_tokens=max_tokens),
    )

    async def collect() -> list[GenerationEvent]:
        return [event async for event in generator.stream(request)]

    return asyncio.run(collect())


def text_of(events: list[GenerationEvent]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


@pytest.fixture(scope="module", params=list(SentenceScoring), ids=lambda s: s.value)
def generator(
    embedder: SentenceTransformerEmbedder, request: pytest.FixtureRequest
) -> ExtractiveGenerator:
    """Each scoring: these passages have fewer sentences than a shortlist, so both embed all."""
    return ExtractiveGenerator(embedder, scoring=request.param)


def test_identity(generator: ExtractiveGenerator, embedder: SentenceTransformerEmbedder) -> None:
    checked: Generator = generator
    assert checked.kind == "extractive"
    assert checked.model == f"extractive:{embedder.model_name}"
    asyncio.run(generator.aclose())


def test_notice_then_cited_sentences(generator: ExtractiveGenerator) -> None:
    events = run(generator, "What is FAISS used for?")
    deltas = [event for event in events if isinstance(event, TextDelta)]
    assert deltas[0].text == EXTRACTIVE_NOTICE + "\n\n"
    lines = [delta.text for delta in deltas[1:]]
    assert lines[0] == (
        "FAISS is a library for efficient similarity search of dense vectors. "
        "[DOC:faiss | CHUNK:faiss#0]\n"
    )
    assert 1 <= len(lines) <= 4
    for line in lines:  # one sentence per delta, ending with a tag from the context
        sentence, tag = line.rsplit(" [", 1)
        assert f"[{tag}" in {f"{p.tag}\n" for p in PASSAGES}
        assert "\n" not in sentence and "```" not in sentence and "|" not in sentence
        assert "import faiss" not in sentence and "Short line" not in sentence
    assert events[-1] == GenerationFinished("stop", prompt_tokens=0, completion_tokens=len(lines))
    assert all(isinstance(event, TextDelta) for event in events[:-1])


def test_every_content_sentence_has_a_valid_citation(generator: ExtractiveGenerator) -> None:
    report = check_citations(text_of(run(generator, "Which search libraries exist?")), CONTEXT)
    assert report.sentences >= 2
    assert (report.invalid_count, report.faithfulness) == (0, 1.0)


def test_deterministic(generator: ExtractiveGenerator) -> None:
    query = "How is text search ranked?"
    assert run(generator, query) == run(generator, query)


@pytest.mark.parametrize("scoring", list(SentenceScoring), ids=lambda s: s.value)
def test_max_sentences(embedder: SentenceTransformerEmbedder, scoring: SentenceScoring) -> None:
    generator = ExtractiveGenerator(embedder, max_sentences=1, scoring=scoring)
    events = run(generator, "search library")
    assert events[-1] == GenerationFinished("stop", 0, 1)
    assert len(events) == 3


def test_max_tokens_cuts_with_length(generator: ExtractiveGenerator) -> None:
    full = run(generator, "Which search libraries exist?")
    first_line = [event for event in full if isinstance(event, TextDelta)][1].text
    events = run(generator, "Which search libraries exist?", max_tokens=len(first_line.split()))
    assert [event for event in events if isinstance(event, TextDelta)][1:] == [
        TextDelta(first_line)
    ]
    assert events[-1] == GenerationFinished("length", 0, 1)


def test_nothing_relevant(generator: ExtractiveGenerator) -> None:
    events = run(generator, "Who won the 1974 football world cup final?")
    assert events == [TextDelta(NO_ANSWER + "\n"), GenerationFinished("stop", 0, 1)]
    assert parse_citation_tags(text_of(events)) == []


def test_no_passages(generator: ExtractiveGenerator) -> None:
    request = GenerationRequest(prompt="", query="anything", passages=())

    async def collect() -> list[GenerationEvent]:
        return [event async for event in generator.stream(request)]

    assert asyncio.run(collect()) == [TextDelta(NO_ANSWER + "\n"), GenerationFinished("stop", 0, 1)]


def test_repeated_and_near_identical_sentences_are_quoted_once(
    generator: ExtractiveGenerator,
) -> None:
    copy = ContextPassage("[DOC:copy | CHUNK:copy#0]", FAISS.text)
    near = ContextPassage(
        "[DOC:near | CHUNK:near#0]",
        "FAISS is a library for efficient similarity search over dense vectors.",
    )
    request = GenerationRequest(prompt="", query="What is FAISS?", passages=(FAISS, copy, near))

    async def collect() -> str:
        return text_of([event async for event in generator.stream(request)])

    lines = asyncio.run(collect()).splitlines()[2:]
    assert lines[0].endswith(FAISS.tag)
    assert all("copy#0" not in line and "near#0" not in line for line in lines)
