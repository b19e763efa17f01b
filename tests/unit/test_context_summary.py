"""Tests for core.context.sentences and core.context.summary: spans, BM25 scores, summaries."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from core.context.sentences import sentence_spans
from core.context.summary import (
    OMISSION_MARK,
    SentenceScorer,
    extractive_summary,
    lexical_sentence_scores,
)


def summarise(
    text: str,
    scorer: SentenceScorer,
    room: int,
    query: str = "q",
    fits: Callable[[str], bool] | None = None,
) -> str | None:
    """A character budget of `room`: estimates are exact, so `fits` agrees unless given."""
    check = fits or (lambda summary: len(summary) <= room)
    return extractive_summary(text, query, scorer, room=room, text_cost=len(text), fits=check)


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three?", ["One.", "Two!", "Three?"]),
        ('He said "hi." Then left.', ['He said "hi."', "Then left."]),
        ("Use x.y here. Pi is 3.14 now.", ["Use x.y here.", "Pi is 3.14 now."]),
        ("Para one\nstill one\n\n  Para two", ["Para one\nstill one", "Para two"]),
        ("code = 1\nx = 2\n\nDone.", ["code = 1\nx = 2", "Done."]),
        ("  \n ", []),
        ("", []),
    ],
    ids=[
        "punctuation",
        "closing_quote",
        "dots_inside_words",
        "blank_line",
        "code",
        "blank",
        "empty",
    ],
)
def test_sentence_spans(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_lexical_scores_follow_query_keywords() -> None:
    texts = ["Tuples are immutable.", "Lists are mutable.", "Tuples and tuple keys."]
    scores = lexical_sentence_scores("Why are tuples immutable?", texts)
    assert scores[0] > scores[2] > scores[1] == 0.0
    assert lexical_sentence_scores("why is it?", texts) == [0.0, 0.0, 0.0]
    assert lexical_sentence_scores("tuples", []) == []


def test_summary_keeps_original_order_and_marks_omissions() -> None:
    text = "Alpha one. Beta two. Gamma three. Delta four."

    def prefer(query: str, parts: Sequence[str]) -> list[float]:
        return [2.0, 0.0, 1.0, 3.0]

    assert summarise(text, prefer, 40) == (f"Alpha one. {OMISSION_MARK} Gamma three. Delta four.")
    assert summarise(text, prefer, 14) == (f"{OMISSION_MARK} Delta four.")
    two = summarise(text, prefer, 26)
    assert two == f"Alpha one. {OMISSION_MARK} Delta four."


def test_greedy_skips_a_sentence_that_does_not_fit_and_takes_a_smaller_one() -> None:
    text = "Short one. This sentence is rather long indeed. Tiny."

    def prefer(query: str, parts: Sequence[str]) -> list[float]:
        return [3.0, 2.0, 1.0]

    assert summarise(text, prefer, 20) == (f"Short one. {OMISSION_MARK} Tiny.")


def test_last_sentence_taken_is_given_back_until_the_real_check_passes() -> None:
    text = "Alpha one. Beta two. Gamma three. Delta four."
    calls: list[str] = []

    def strict(summary: str) -> bool:
        calls.append(summary)
        return len(summary) <= 30

    def prefer(query: str, parts: Sequence[str]) -> list[float]:
        return [2.0, 0.0, 1.0, 3.0]

    summary = summarise(text, prefer, 40, fits=strict)
    assert summary == f"Alpha one. {OMISSION_MARK} Delta four."
    assert calls == [f"Alpha one. {OMISSION_MARK} Gamma three. Delta four.", summary]


def test_estimates_use_the_character_share_of_the_measured_cost() -> None:
    text = "Aaaa aaaa. Bbbb bbbb. Cccc cccc. Dddd dddd."  # 43 characters, say 86 units
    summary = extractive_summary(
        text, "", lexical_sentence_scores, room=50, text_cost=2 * len(text), fits=lambda s: True
    )
    # "Aaaa aaaa. Bbbb bbbb. …" is 22 characters -> 44 units; any third sentence needs >= 66.
    assert summary == f"Aaaa aaaa. Bbbb bbbb. {OMISSION_MARK}"


def test_ties_prefer_earlier_sentences_and_adjacent_ones_keep_their_separator() -> None:
    text = "First.\nSecond. Third."
    summary = summarise(text, lexical_sentence_scores, 17, query="")
    assert summary == f"First.\nSecond. {OMISSION_MARK}"


def test_no_summary_when_nothing_fits_or_one_sentence() -> None:
    text = "Alpha one. Beta two."
    assert summarise(text, lexical_sentence_scores, 5) is None
    assert summarise("Only one.", lexical_sentence_scores, 100) is None
    assert summarise(text, lexical_sentence_scores, 0) is None


def test_scorer_must_return_one_score_per_sentence() -> None:
    def short(query: str, parts: Sequence[str]) -> list[float]:
        return [1.0]

    with pytest.raises(ValueError) as caught:
        summarise("A. B. C.", short, 100)
    assert str(caught.value) == "sentence scorer returned 1 scores for 3 sentences"
