"""Extractive summaries of a chunk that does not fit: its most query-relevant sentences.

The summary takes sentences greedily by score (highest first, earlier sentence on ties) while
their estimated sizes fit the room left, checks the rendered summary against the real budget
(giving back the last sentence taken until it passes), and shows them in their original order. Adjacent
sentences keep the original text between them; every omitted stretch (before, between or after
the kept sentences) is shown as `OMISSION_MARK`. Sentence scores come from an injected
`SentenceScorer`; `lexical_sentence_scores` is the default.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence

from core.context.sentences import sentence_spans
from core.retrieve.keywords import extract_keywords

__all__ = [
    "BM25_B",
    "BM25_K1",
    "OMISSION_MARK",
    "SentenceScorer",
    "extractive_summary",
    "lexical_sentence_scores",
]

SentenceScorer = Callable[[str, Sequence[str]], Sequence[float]]
"""(query, sentences) -> one relevance score per sentence, higher is more relevant."""

OMISSION_MARK = "…"
BM25_K1 = 1.2
BM25_B = 0.75

_TERM = re.compile(r"[^\W_]+")


def _terms(text: str) -> list[str]:
    """Lower-cased alphanumeric runs with a trailing plural "s" folded (not after "s")."""
    return [
        word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
        for word in _TERM.findall(text.lower())
    ]


def lexical_sentence_scores(query: str, sentences: Sequence[str]) -> list[float]:
    """BM25 of each sentence against the query's keywords, the sentences being the collection.

    Query terms are the alphanumeric parts of `extract_keywords(query)` (k1 = 1.2, b = 0.75,
    idf = ln(1 + (N - n + 0.5) / (n + 0.5))). All zeros when the query has no keywords.
    """
    query_terms = list(dict.fromkeys(t for k in extract_keywords(query) for t in _terms(k)))
    counts = [Counter(_terms(sentence)) for sentence in sentences]
    if not query_terms or not counts:
        return [0.0] * len(counts)
    lengths = [sum(c.values()) for c in counts]
    average = max(sum(lengths) / len(lengths), 1.0)
    total = len(counts)
    idf = {
        term: math.log(1.0 + (total - n + 0.5) / (n + 0.5))
        for term in query_terms
        for n in [sum(1 for c in counts if term in c)]
    }
    scores: list[float] = []
    for count, length in zip(counts, lengths, strict=True):
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / average)
        scores.append(
            math.fsum(
                idf[t] * count[t] * (BM25_K1 + 1.0) / (count[t] + norm)
                for t in query_terms
                if t in count
            )
        )
    return scores


def _render(text: str, spans: Sequence[tuple[int, int]], chosen: Sequence[int]) -> str:
    """The chosen sentences (sorted indices into `spans`) with omissions marked."""
    parts: list[str] = [OMISSION_MARK] if chosen[0] > 0 else []
    run_start = chosen[0]
    for previous, index in zip(chosen, [*chosen[1:], None], strict=True):
        if index is not None and index == previous + 1:
            continue
        parts.append(text[spans[run_start][0] : spans[previous][1]])
        if index is not None:
            parts.append(OMISSION_MARK)
            run_start = index
    if chosen[-1] < len(spans) - 1:
        parts.append(OMISSION_MARK)
    return " ".join(parts)


def extractive_summary(
    text: str,
    query: str,
    scorer: SentenceScorer,
    *,
    room: int,
    text_cost: int,
    fits: Callable[[str], bool],
) -> str | None:
    """A summary of `text` that `fits` accepts, or None when not even one sentence fits.

    `room` is the budget left for the summary and `text_cost` what the whole `text` measures in
    the same unit; a candidate summary is estimated at its character share of `text_cost`. Sentences are taken by score while the estimate stays within `room`; the
    rendered summary is then checked with `fits`, and the last sentence taken is given back
    until it passes. Also None when `text` has fewer than two sentences (the summary would be
    the text itself). Raises ValueError when `scorer` returns a score count different from the
    sentence count.
    """
    spans = sentence_spans(text)
    if len(spans) < 2 or room < 1:
        return None
    scores = list(scorer(query, [text[start:end] for start, end in spans]))
    if len(scores) != len(spans):
        raise ValueError(
            f"sentence scorer returned {len(scores)} scores for {len(spans)} sentences"
        )
    ranked = sorted(
        range(len(spans)),
        key=lambda i: (-scores[i] if not math.isnan(scores[i]) else math.inf, i),
    )
    chosen: list[int] = []
    for index in ranked:
        chars = len(_render(text, spans, sorted([*chosen, index])))
        if -(-max(text_cost, 0) * chars // len(text)) <= room:  # ceil of the character share
            chosen.append(index)
    while chosen:
        candidate = _render(text, spans, sorted(chosen))
        if fits(candidate):
            return candidate
        chosen.pop()
    return None
