"""Tests of plain-text chunking (`chunk_text`) and of the `chunk_document` entry point."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.errors import FieldViolation, InvalidArgument
from core.ingest.chunking import chunk_document
from core.ingest.packing import split_sentences
from core.ingest.text_chunker import chunk_text
from core.models import ChunkDraft, Document, SourceType

CountTokens = Callable[[str], int]

RELEASE_NOTES = """\
The 3.12 release improves error messages.
Tracebacks now suggest the module you forgot to import.

Comprehensions are inlined, which makes them up to twice as fast.

The distutils package was removed. Use setuptools instead.
"""


def test_paragraphs_are_packed_up_to_the_budget(count_words: CountTokens) -> None:
    chunks = chunk_text(RELEASE_NOTES, 26, count_words)

    assert chunks == [
        ChunkDraft(
            text="The 3.12 release improves error messages.\n"
            "Tracebacks now suggest the module you forgot to import.\n\n"
            "Comprehensions are inlined, which makes them up to twice as fast.",
            token_estimate=26,
        ),
        ChunkDraft(
            text="The distutils package was removed. Use setuptools instead.",
            token_estimate=8,
        ),
    ]


def test_everything_fits_in_one_chunk_with_a_large_budget(count_words: CountTokens) -> None:
    chunks = chunk_text(RELEASE_NOTES, 1024, count_words)

    assert len(chunks) == 1
    assert chunks[0].text == RELEASE_NOTES.strip()
    assert chunks[0].section_path == ()
    assert chunks[0].has_code is False


def test_an_oversized_paragraph_is_split_at_sentences(count_words: CountTokens) -> None:
    paragraph = (
        "The GIL protects interpreter state. It is released during blocking I/O! "
        "Is it going away? PEP 703 makes it optional."
    )

    chunks = chunk_text(paragraph, 12, count_words)

    assert [chunk.text for chunk in chunks] == [
        "The GIL protects interpreter state. It is released during blocking I/O!",
        "Is it going away? PEP 703 makes it optional.",
    ]
    assert all(chunk.token_estimate <= 12 for chunk in chunks)


def test_an_oversized_sentence_is_split_at_words(count_words: CountTokens) -> None:
    sentence = " ".join(f"word{i}" for i in range(10))

    chunks = chunk_text(sentence, 4, count_words)

    assert [chunk.text for chunk in chunks] == [
        "word0 word1 word2 word3",
        "word4 word5 word6 word7",
        "word8 word9",
    ]


def test_a_single_word_larger_than_the_budget_is_kept_whole() -> None:
    def count_characters(text: str) -> int:
        return len(text.replace(" ", ""))

    chunks = chunk_text(
        "see https://docs.python.org/3/faq/programming.html now", 8, count_characters
    )

    assert [chunk.text for chunk in chunks] == [
        "see",
        "https://docs.python.org/3/faq/programming.html",
        "now",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("One. Two.", ["One. ", "Two."], id="two-sentences"),
        pytest.param('He said "stop." Then left.', ['He said "stop." ', "Then left."], id="quote"),
        pytest.param("Use e.g. this. ok", ["Use e.g. this. ok"], id="lowercase-continues"),
        pytest.param("Steps:\n- one\n- two", ["Steps:\n", "- one\n", "- two"], id="list-items"),
        pytest.param("no boundary", ["no boundary"], id="single"),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    "text",
    [pytest.param("", id="empty"), pytest.param(" \n\n \t\n", id="whitespace")],
)
def test_blank_text_gives_no_chunk(text: str, count_words: CountTokens) -> None:
    assert chunk_text(text, 64, count_words) == []


def test_windows_line_endings_separate_paragraphs(count_words: CountTokens) -> None:
    chunks = chunk_text("first paragraph\r\n\r\nsecond paragraph", 2, count_words)

    assert [chunk.text for chunk in chunks] == ["first paragraph", "second paragraph"]


# chunk_document: the entry point that validates the budget and dispatches on the format.


@pytest.mark.parametrize(
    ("source_type", "expected"),
    [
        pytest.param(
            SourceType.MARKDOWN,
            ChunkDraft("Run pip install groundwire.", ("Install",), token_estimate=4),
            id="markdown-heading-is-a-section",
        ),
        pytest.param(
            SourceType.TEXT,
            ChunkDraft("# Install\n\nRun pip install groundwire.", (), token_estimate=6),
            id="text-heading-is-plain-text",
        ),
    ],
)
def test_chunk_document_dispatches_on_source_type(
    source_type: SourceType, expected: ChunkDraft, count_words: CountTokens
) -> None:
    document = Document("doc-1", "# Install\n\nRun pip install groundwire.", source_type)

    assert chunk_document(document, 64, count_words) == [expected]


@pytest.mark.parametrize(
    "source_type",
    [pytest.param(SourceType.HTML, id="html"), pytest.param(SourceType.PDF, id="pdf")],
)
def test_chunk_document_rejects_html_and_pdf(
    source_type: SourceType, count_words: CountTokens
) -> None:
    document = Document("doc-1", "<p>hi</p>", source_type)

    with pytest.raises(InvalidArgument) as raised:
        chunk_document(document, 64, count_words)

    description = "HTML and PDF ingestion are not supported yet; send Markdown or plain text"
    assert str(raised.value) == f"documents.source_type: {description}"
    assert raised.value.violations == (FieldViolation("documents.source_type", description),)


@pytest.mark.parametrize(
    "max_tokens",
    [pytest.param(31, id="below-32"), pytest.param(1025, id="above-1024"), pytest.param(0, id="0")],
)
def test_chunk_document_rejects_a_budget_out_of_range(
    max_tokens: int, count_words: CountTokens
) -> None:
    with pytest.raises(InvalidArgument) as raised:
        chunk_document(Document("doc-1", "text"), max_tokens, count_words)

    assert str(raised.value) == (
        f"chunking.max_tokens: must be between 32 and 1024 tokens, got {max_tokens}"
    )
    assert raised.value.violations[0].field == "chunking.max_tokens"


@pytest.mark.parametrize(
    "max_tokens", [pytest.param(32, id="lower-bound"), pytest.param(1024, id="upper-bound")]
)
def test_chunk_document_accepts_the_bounds(max_tokens: int, count_words: CountTokens) -> None:
    assert chunk_document(Document("doc-1", "text"), max_tokens, count_words) == [
        ChunkDraft(text="text", token_estimate=1)
    ]
