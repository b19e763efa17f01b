"""Tests of the sentence-aware chunker: sentences intact, budget kept, sections respected."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.ingest.markdown_sections import parse_sections
from core.ingest.packing import BlockKind, split_sentences
from core.ingest.sentence_chunker import chunk_sentences_markdown, chunk_sentences_text
from core.models import ChunkDraft
from tests.unit.python_doc_pages import PROGRAMMING_FAQ

CountTokens = Callable[[str], int]


@pytest.mark.parametrize("max_tokens", [48, 64, 128, 256])
def test_chunks_fit_the_minilm_budget_and_keep_every_sentence_whole(
    max_tokens: int, embedder: SentenceTransformerEmbedder
) -> None:
    count = embedder.count_tokens

    chunks = chunk_sentences_markdown(PROGRAMMING_FAQ, max_tokens, 10, count)

    assert all(count(c.text) <= max_tokens for c in chunks)
    assert [c.token_estimate for c in chunks] == [count(c.text) for c in chunks]
    for section in parse_sections(PROGRAMMING_FAQ):
        texts = [c.text for c in chunks if c.section_path == section.path]
        for block in section.blocks:
            if block.kind is not BlockKind.PARAGRAPH:
                continue
            for sentence in split_sentences(block.text):
                if count(sentence) <= max_tokens:
                    assert any(sentence.strip() in text for text in texts), sentence


def test_chunks_never_cross_a_section(embedder: SentenceTransformerEmbedder) -> None:
    chunks = chunk_sentences_markdown(PROGRAMMING_FAQ, 256, 20, embedder.count_tokens)

    assert [c.section_path for c in chunks] == [
        ("Programming FAQ", "How do I create a higher order function?"),
        ("Programming FAQ", "How do I create a higher order function?"),
        ("Programming FAQ", "How can my code discover the name of an object?"),
        ("Programming FAQ", "How can my code discover the name of an object?"),
    ]
    assert [c.has_code for c in chunks] == [True, False, True, False]


def test_sentences_are_packed_greedily_and_cut_only_between_sentences(
    count_words: CountTokens,
) -> None:
    text = "One two three. Four five. Six seven eight nine. Ten eleven."

    chunks = chunk_sentences_text(text, 5, 1, count_words)

    assert [c.text for c in chunks] == [
        "One two three. Four five.",
        "Six seven eight nine.",
        "Ten eleven.",
    ]


def test_paragraphs_share_a_chunk_separated_by_a_blank_line(count_words: CountTokens) -> None:
    text = "First paragraph here.\n\nSecond one.\nStill the second.\n\nThird paragraph."

    chunks = chunk_sentences_text(text, 8, 0, count_words, page=2)

    assert chunks == [
        ChunkDraft(
            "First paragraph here.\n\nSecond one.\nStill the second.",
            token_estimate=8,
            page=2,
        ),
        ChunkDraft("Third paragraph.", token_estimate=2, page=2),
    ]


def test_a_sentence_over_the_budget_is_cut_by_the_fixed_chunker(count_words: CountTokens) -> None:
    long_sentence = "The callable object approach has the disadvantage that it is slower."
    text = f"Short one. {long_sentence} Last one."

    chunks = chunk_sentences_text(text, 5, 2, count_words)

    assert [c.text for c in chunks] == [
        "Short one.",
        "The callable object approach has",
        "approach has the disadvantage that",
        "disadvantage that it is slower.",
        "Last one.",
    ]


def test_a_code_block_is_one_unit_and_cut_only_when_over_the_budget(
    count_words: CountTokens,
) -> None:
    text = (
        "# Guide\n\nUse it like this.\n\n```python\nx = 1\n```\n\n"
        "Or the long way.\n\n```python\na = [1, 2, 3, 4, 5, 6, 7, 8]\n```\n"
    )

    chunks = chunk_sentences_markdown(text, 9, 0, count_words)

    assert [(c.text, c.has_code) for c in chunks] == [
        ("Use it like this.\n\n```python\nx = 1\n```", True),
        ("Or the long way.", False),
        ("```python\na = [1, 2, 3, 4, 5, 6,", True),
        ("7, 8]\n```", True),
    ]


def test_chunking_is_deterministic(embedder: SentenceTransformerEmbedder) -> None:
    first = chunk_sentences_markdown(PROGRAMMING_FAQ, 64, 10, embedder.count_tokens)
    second = chunk_sentences_markdown(PROGRAMMING_FAQ, 64, 10, embedder.count_tokens)

    assert first == second


def test_a_tokenizer_that_is_not_additive_still_gets_fitting_chunks() -> None:
    def count_with_lines(text: str) -> int:  # words plus one token per line break
        return len(text.split()) + text.count("\n")

    chunks = chunk_sentences_text(PROGRAMMING_FAQ, 40, 5, count_with_lines)

    assert all(count_with_lines(c.text) <= 40 for c in chunks)


@pytest.mark.parametrize("text", ["", " \n\n \n"], ids=["empty", "blank"])
def test_no_text_gives_no_chunk(text: str, count_words: CountTokens) -> None:
    assert chunk_sentences_text(text, 32, 0, count_words) == []
    assert chunk_sentences_markdown(text, 32, 0, count_words) == []
