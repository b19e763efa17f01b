"""The extractive generator's lexical scoring (the default): no model work, the answering section
quoted first, one sentence per document, nothing quoted when no sentence shares a keyword."""

from __future__ import annotations

import pytest

from core.answer.citation_check import check_citations
from core.answer.extractive_generator import (
    INLINE_CANDIDATES,
    INLINE_CONTEXT_CHARS,
    NO_ANSWER,
    ExtractiveGenerator,
    SentenceScoring,
)
from core.answer.lexical_choice import choose_lexically
from core.answer.protocol import ContextPassage
from core.answer.sentence_candidates import sentence_candidates
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from tests.unit.test_extractive_shortlist import CONTEXT, PASSAGES, answer
from tests.unit.test_query_embedding_cache import CountingEmbedder


@pytest.mark.parametrize(
    ("query", "section"),
    [
        ("Why are Python strings immutable?", 2),
        ("How fast are exceptions?", 7),
        ("Is floating point arithmetic exact?", 1),
        ("Why is there no switch or case statement in Python?", 8),
    ],
    ids=["strings", "exceptions", "floating-point", "switch"],
)
def test_quotes_the_top_source_first_without_the_model(
    embedder: SentenceTransformerEmbedder, query: str, section: int
) -> None:
    """The answering section where retrieval ranks it (first): quoted first, nothing embedded."""
    tag = f"[DOC:design-{section} | CHUNK:design-{section}#0]"
    ranked = tuple(sorted(PASSAGES, key=lambda p: p.tag != tag))
    counting = CountingEmbedder(embedder)
    generator = ExtractiveGenerator(counting)  # type: ignore[arg-type]
    assert generator.scoring is SentenceScoring.LEXICAL
    lines = answer(generator, query, ranked)
    assert lines[0].endswith(tag)
    assert (counting.query_batches, counting.document_batches) == ([], [])
    report = check_citations("\n".join(lines), CONTEXT)
    assert (report.invalid_count, report.faithfulness) == (0, 1.0)


def test_exceptions_ranked_last_still_lead_on_a_strong_match(
    embedder: SentenceTransformerEmbedder,
) -> None:
    lines = answer(ExtractiveGenerator(embedder), "How fast are exceptions?")
    assert lines[0].endswith("[DOC:design-7 | CHUNK:design-7#0]")


def test_one_sentence_per_document_spreads_over_the_sources(
    embedder: SentenceTransformerEmbedder,
) -> None:
    lines = answer(ExtractiveGenerator(embedder), "Why are Python strings immutable?")
    tags = [line.rsplit(" [", 1)[1] for line in lines]
    assert len(lines) == 4
    assert len(set(tags)) == 4


def test_earlier_passage_wins_between_equal_sentences() -> None:
    first = ContextPassage("[DOC:a | CHUNK:a#0]", "Otters sleep in groups called rafts.")
    second = ContextPassage("[DOC:b | CHUNK:b#0]", "Otters sleep floating on their backs.")
    for passages in ((first, second), (second, first)):
        chosen = choose_lexically("Where do otters sleep?", sentence_candidates(passages), 1)
        assert [c.tag for c in chosen] == [passages[0].tag]


def test_the_best_matching_sentence_of_a_passage_beats_its_lead() -> None:
    passages = (
        ContextPassage(
            "[DOC:a | CHUNK:a#0]",
            "Otters are mammals of many kinds. Sea otters hold hands while they sleep.",
        ),
        ContextPassage("[DOC:b | CHUNK:b#0]", "Most otters hunt for fish in rivers."),
        ContextPassage("[DOC:c | CHUNK:c#0]", "Beavers build dams across small streams."),
    )
    chosen = choose_lexically("Why do otters hold hands?", sentence_candidates(passages), 4)
    assert [c.text for c in chosen] == [
        "Sea otters hold hands while they sleep.",  # one per document: not the lead as well
        "Most otters hunt for fish in rivers.",
    ]  # the beaver sentence shares no keyword


def test_near_repeats_are_quoted_once() -> None:
    passages = (
        ContextPassage(
            "[DOC:a | CHUNK:a#0]", "FAISS searches dense vectors very quickly on a CPU."
        ),
        ContextPassage(
            "[DOC:b | CHUNK:b#0]", "FAISS searches dense vectors very quickly on one CPU."
        ),
        ContextPassage("[DOC:c | CHUNK:c#0]", "Tantivy can search text but not dense vectors."),
    )
    chosen = choose_lexically("How does FAISS search vectors?", sentence_candidates(passages), 4)
    assert [c.tag for c in chosen] == ["[DOC:a | CHUNK:a#0]", "[DOC:c | CHUNK:c#0]"]


def test_no_shared_keyword_answers_nothing(embedder: SentenceTransformerEmbedder) -> None:
    lines = answer(ExtractiveGenerator(embedder), "Who won the 1974 football world cup final?")
    assert lines == [NO_ANSWER]


def test_a_large_context_is_chosen_off_the_loop_alike(
    embedder: SentenceTransformerEmbedder,
) -> None:
    """Past INLINE_CONTEXT_CHARS and INLINE_CANDIDATES the sentences are split and scored on a
    worker thread: the same choice as inline."""
    many = tuple(
        ContextPassage(
            f"[DOC:bulk-{n} | CHUNK:bulk-{n}#0]",
            " ".join(
                f"Filler sentence number {n}-{i} about nothing much at all." for i in range(8)
            ),
        )
        for n in range(60)
    )
    ranked = PASSAGES + many
    assert sum(len(p.text) for p in ranked) > INLINE_CONTEXT_CHARS
    assert len(sentence_candidates(ranked)) > INLINE_CANDIDATES
    query = "Why are Python strings immutable?"
    lines = answer(ExtractiveGenerator(embedder), query, ranked)
    expected = choose_lexically(query, sentence_candidates(ranked), 4)
    assert lines == [f"{c.text} {c.tag}" for c in expected]
