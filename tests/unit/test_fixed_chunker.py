"""Tests of the fixed-size chunker: budget, overlap, coverage, long words, code markers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.ingest.fixed_chunker import chunk_fixed, fixed_windows, has_code_marker, largest_within
from core.models import ChunkDraft
from tests.unit.python_doc_pages import PROGRAMMING_FAQ

CountTokens = Callable[[str], int]
WORDS = " ".join(f"w{i}" for i in range(10))


def covered_characters(text: str, spans: list[tuple[int, int]]) -> set[int]:
    return {i for start, end in spans for i in range(start, end) if not text[i].isspace()}


@pytest.mark.parametrize(("max_tokens", "overlap"), [(32, 0), (48, 8), (64, 20), (200, 50)])
def test_windows_fit_the_minilm_budget_and_cover_the_text(
    max_tokens: int, overlap: int, embedder: SentenceTransformerEmbedder
) -> None:
    count = embedder.count_tokens

    spans = fixed_windows(PROGRAMMING_FAQ, max_tokens, overlap, count)
    chunks = chunk_fixed(PROGRAMMING_FAQ, max_tokens, overlap, count)

    assert len(chunks) == len(spans) > 1
    assert [c.text for c in chunks] == [PROGRAMMING_FAQ[a:b] for a, b in spans]
    assert all(count(c.text) <= max_tokens for c in chunks)
    assert [c.token_estimate for c in chunks] == [count(c.text) for c in chunks]
    assert [start for start, _ in spans] == sorted({start for start, _ in spans})
    everything = {i for i, ch in enumerate(PROGRAMMING_FAQ) if not ch.isspace()}
    assert covered_characters(PROGRAMMING_FAQ, spans) == everything


def test_windows_are_the_longest_that_fit(embedder: SentenceTransformerEmbedder) -> None:
    count = embedder.count_tokens
    words = PROGRAMMING_FAQ.split()

    chunks = chunk_fixed(PROGRAMMING_FAQ, 64, 0, count)

    for chunk, following in zip(chunks, chunks[1:], strict=False):
        one_more = chunk.text + " " + following.text.split()[0]
        assert count(one_more) > 64
    assert sum(len(c.text.split()) for c in chunks) == len(words)


def test_consecutive_windows_share_at_most_overlap_tokens(
    embedder: SentenceTransformerEmbedder,
) -> None:
    count = embedder.count_tokens

    spans = fixed_windows(PROGRAMMING_FAQ, 64, 20, count)

    for (_, previous_end), (start, _) in zip(spans, spans[1:], strict=False):
        shared = PROGRAMMING_FAQ[start:previous_end]
        assert shared.strip(), "consecutive windows overlap"
        assert count(shared) <= 20


def test_overlap_in_words_is_exact(count_words: CountTokens) -> None:
    chunks = chunk_fixed(WORDS, 4, 2, count_words)

    assert [c.text for c in chunks] == ["w0 w1 w2 w3", "w2 w3 w4 w5", "w4 w5 w6 w7", "w6 w7 w8 w9"]


def test_no_overlap_gives_disjoint_windows(count_words: CountTokens) -> None:
    chunks = chunk_fixed(WORDS, 4, 0, count_words)

    assert [c.text for c in chunks] == ["w0 w1 w2 w3", "w4 w5 w6 w7", "w8 w9"]


def test_a_text_that_fits_is_one_window_with_its_line_breaks(count_words: CountTokens) -> None:
    text = "  First line\nsecond line.\n\n    indented = True\n"

    chunks = chunk_fixed(text, 32, 4, count_words, section_path=("Guide",), page=3)

    assert chunks == [
        ChunkDraft(
            "First line\nsecond line.\n\n    indented = True",
            ("Guide",),
            has_code=True,
            token_estimate=7,
            page=3,
        )
    ]


@pytest.mark.parametrize("text", ["", "   \n\t\n"], ids=["empty", "whitespace"])
def test_no_text_gives_no_window(text: str, count_words: CountTokens) -> None:
    assert chunk_fixed(text, 32, 4, count_words) == []


def test_an_over_long_word_is_cut_into_windows_of_its_own(
    embedder: SentenceTransformerEmbedder,
) -> None:
    count = embedder.count_tokens
    sections = "/".join(f"section-{i}.{i + 1}" for i in range(12))
    blob = f"https://docs.python.org/3/reference/{sections}/index.html#the-import-system"
    text = f"The page below is linked in full:\n\n{blob}\n\nThat is all."

    chunks = chunk_fixed(text, 32, 8, count)

    assert count(blob) > 32
    assert all(count(c.text) <= 32 for c in chunks)
    pieces = [c.text for c in chunks[1:-1]]
    assert "".join(pieces) == blob
    assert chunks[0].text == "The page below is linked in full:"
    assert chunks[-1].text == "That is all."


def test_a_tokenizer_that_is_not_additive_still_gets_fitting_windows() -> None:
    def count_characters(text: str) -> int:  # every 4 characters, spaces included, is a token
        return (len(text) + 3) // 4

    chunks = chunk_fixed(PROGRAMMING_FAQ, 40, 10, count_characters)

    assert all(count_characters(c.text) <= 40 for c in chunks)
    assert sum(1 for c in chunks if count_characters(c.text) >= 35) > len(chunks) // 2


def test_chunking_is_deterministic(embedder: SentenceTransformerEmbedder) -> None:
    first = chunk_fixed(PROGRAMMING_FAQ, 48, 12, embedder.count_tokens)
    second = chunk_fixed(PROGRAMMING_FAQ, 48, 12, embedder.count_tokens)

    assert first == second


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Using nested scopes:\n\n```python\ndef f(): pass", True, id="fence"),
        pytest.param("A closing fence\n~~~\nends it", True, id="tilde-fence"),
        pytest.param("Consider:\n\n    >>> class A:\n    ...     pass", True, id="indented"),
        pytest.param("Items:\n\n    - nested item\n    - another", False, id="indented-list"),
        pytest.param("Use `os.getcwd()` inline.", False, id="code-span"),
        pytest.param("a line\n    continued paragraph", False, id="lazy-continuation"),
    ],
)
def test_code_markers(text: str, expected: bool) -> None:
    assert has_code_marker(text) is expected


def test_the_overlap_must_be_smaller_than_the_budget(count_words: CountTokens) -> None:
    with pytest.raises(ValueError) as caught:
        fixed_windows(WORDS, 4, 4, count_words)

    assert str(caught.value) == "need 0 <= overlap_tokens < max_tokens; got 4, 4"


@pytest.mark.parametrize("guess", [1, 7, 40, 1000], ids=lambda g: f"guess-{g}")
def test_largest_within_finds_the_boundary_from_any_guess(guess: int) -> None:
    sizes = [0, 3, 5, 5, 9, 12, 13, 20, 21, 30]  # measure(n) for n = 0..9

    assert largest_within(sizes.__getitem__, 9, 12, guess) == 5
    assert largest_within(sizes.__getitem__, 9, 2, guess) == 0
    assert largest_within(sizes.__getitem__, 9, 30, guess) == 9
