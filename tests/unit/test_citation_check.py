"""Tests for core.answer.citation_check: validation, fabricated tags, faithfulness."""

from __future__ import annotations

import pytest

from core.answer.citation_check import CitationReport, check_citations, split_sentences
from core.answer.extractive_generator import EXTRACTIVE_NOTICE, NO_ANSWER
from core.context.citations import ContextCitation


def citation(document_id: str, ordinal: int = 0) -> ContextCitation:
    chunk_id = f"{document_id}#{ordinal}"
    return ContextCitation(
        tag=f"[DOC:{document_id} | CHUNK:{chunk_id}]",
        document_id=document_id,
        chunk_id=chunk_id,
        section_path=(),
        source_path=f"docs/{document_id}.md",
    )


A, B, C = citation("a"), citation("b", 1), citation("c", 2)
CONTEXT = (A, B, C)


def test_all_valid_in_order_of_first_use() -> None:
    answer = f"Bees fly {B.tag}. Ants walk {A.tag}. Bees sting {B.tag}."
    assert check_citations(answer, CONTEXT) == CitationReport(
        valid=(B, A), invalid_count=0, faithfulness=1.0, sentences=3
    )


def test_fabricated_id_is_counted_and_removed() -> None:
    answer = (
        f"Bees fly {B.tag}. Ants walk [DOC:a | CHUNK:a#9]. Moths glow [DOC:zz | CHUNK:zz#0] "
        "[DOC:zz | CHUNK:zz#0]."
    )
    report = check_citations(answer, CONTEXT)
    assert report.valid == (B,)
    assert report.invalid_count == 3  # every occurrence, repeats included; a#9 has a real doc
    assert report.sentences == 3
    assert report.faithfulness == pytest.approx(1 / 3)


def test_sentence_with_a_valid_and_a_fabricated_tag_is_cited() -> None:
    report = check_citations(f"Bees fly {A.tag} [DOC:x | CHUNK:x#0].", CONTEXT)
    assert (report.valid, report.invalid_count, report.faithfulness) == ((A,), 1, 1.0)


def test_tag_after_final_punctuation_belongs_to_that_sentence() -> None:
    answer = f"Foo is first. {A.tag} Bar is second."
    assert split_sentences(answer) == [f"Foo is first. {A.tag}", "Bar is second."]
    assert check_citations(answer, CONTEXT).faithfulness == 0.5


def test_whitespace_variants_of_a_tag_are_valid() -> None:
    report = check_citations("Bees fly [DOC: b|CHUNK:b#1 ].", CONTEXT)
    assert (report.valid, report.faithfulness) == ((B,), 1.0)


@pytest.mark.parametrize(
    ("answer", "cited", "sentences"),
    [
        pytest.param(f"One {A.tag}. Two. Three {B.tag}. Four?", 2, 4, id="two_of_four"),
        pytest.param(f"One! Two {C.tag}!\n\n  \nThree.", 1, 3, id="blank_lines_ignored"),
        pytest.param(f"# Heading\n1. First item {A.tag}.\n2. Second item.", 1, 2, id="list"),
        pytest.param(f"Line one.\n{A.tag}\nLine two.", 1, 2, id="tag_on_next_line"),
        pytest.param(f"{A.tag}\nLine one. Line two.", 1, 2, id="leading_tag"),
        pytest.param("See v2.1 of the guide [DOC:x.y | CHUNK:x. y#0] now.", 0, 1, id="dots"),
    ],
)
def test_faithfulness_arithmetic(answer: str, cited: int, sentences: int) -> None:
    report = check_citations(answer, CONTEXT)
    assert report.sentences == sentences
    assert report.faithfulness == pytest.approx(cited / sentences)


def test_extractive_notice_is_not_a_sentence() -> None:
    answer = f"{EXTRACTIVE_NOTICE}\n\nBees fly far. {B.tag}\nAnts walk home. {A.tag}\n"
    assert check_citations(answer, CONTEXT) == CitationReport(
        valid=(B, A), invalid_count=0, faithfulness=1.0, sentences=2
    )


def test_extractive_no_answer_counts_as_an_uncited_sentence() -> None:
    assert check_citations(NO_ANSWER, CONTEXT) == CitationReport((), 0, 0.0, 1)


@pytest.mark.parametrize(
    "answer", ["", "   \n\n", f"{EXTRACTIVE_NOTICE}\n\n"], ids=["empty", "blank", "notice_only"]
)
def test_empty_answer(answer: str) -> None:
    assert check_citations(answer, CONTEXT) == CitationReport((), 0, 0.0, 0)


def test_duplicate_context_entries_are_harmless() -> None:
    report = check_citations(f"Bees fly {A.tag}.", (A, A, B))
    assert report == CitationReport((A,), 0, 1.0, 1)
