"""The extractive answer's sentences chosen without the model (`SentenceScoring.LEXICAL`).

Each candidate is scored as `sentence_prefilter.prefilter_scores` does: BM25 against the
question's keywords (divided by the best candidate's), plus `passage_weight / (1 + passage rank)`
(the retrieval's ranking, which already compared the question with every chunk through the
model), plus `lead_weight` for the first sentence of its passage. Only sentences sharing a keyword
with the question are quoted: the best `max_sentences` by descending score (ties: context order),
at most `per_document` from one document (so the answer spreads over the top sources: a relevant
source the retrieval ranked second still gets quoted), and a sentence sharing
`NEAR_REPEAT_OVERLAP` of its words with one already chosen is left out. No candidate sharing a
keyword with the question means nothing in the context answers it: nothing is chosen. The
weights come from benchmarks/answer/extractive_scorer_sweep.py (`gated p=2.0 l=0.5 1/doc` in
results/extractive_scorer_sweep.md).

No model work: the question is not embedded again (retrieval did that) and no sentence is
embedded; a ten-passage context costs a few milliseconds of Python.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.sentence_candidates import SentenceCandidate
from core.answer.sentence_prefilter import with_priors
from core.context.citations import parse_citation_tags
from core.context.summary import lexical_sentence_scores

__all__ = [
    "LEXICAL_LEAD_WEIGHT",
    "LEXICAL_PASSAGE_WEIGHT",
    "NEAR_REPEAT_OVERLAP",
    "PER_DOCUMENT",
    "choose_lexically",
]

LEXICAL_PASSAGE_WEIGHT = 2.0
LEXICAL_LEAD_WEIGHT = 0.5
PER_DOCUMENT = 1
NEAR_REPEAT_OVERLAP = 0.8
"""Word-set Jaccard similarity at which a sentence repeats one already chosen."""

_WORD = re.compile(r"[^\W_]+")


def choose_lexically(
    query: str,
    candidates: Sequence[SentenceCandidate],
    max_sentences: int,
    passage_weight: float = LEXICAL_PASSAGE_WEIGHT,
    lead_weight: float = LEXICAL_LEAD_WEIGHT,
    per_document: int = PER_DOCUMENT,
) -> list[SentenceCandidate]:
    """Up to `max_sentences` of the candidates sharing a keyword with `query`, best first.
    `per_document` < 1: no limit per document."""
    lexical = lexical_sentence_scores(query, [c.text for c in candidates])
    scores = with_priors(lexical, candidates, passage_weight, lead_weight)
    matching = [i for i, score in enumerate(lexical) if score > 0.0]
    order = sorted(matching, key=lambda i: (-round(scores[i], 9), i))
    chosen: list[SentenceCandidate] = []
    words: list[frozenset[str]] = []
    per: dict[str, int] = {}
    for index in order:
        if len(chosen) == max_sentences:
            break
        candidate = candidates[index]
        document = _document(candidate.tag)
        if per_document > 0 and per.get(document, 0) >= per_document:
            continue
        mine = frozenset(_WORD.findall(candidate.text.casefold()))
        if any(len(mine & other) >= NEAR_REPEAT_OVERLAP * len(mine | other) for other in words):
            continue
        chosen.append(candidate)
        words.append(mine)
        per[document] = per.get(document, 0) + 1
    return chosen


def _document(tag: str) -> str:
    """The document id of a citation tag (the tag itself when it cannot be parsed)."""
    parsed = parse_citation_tags(tag)
    return parsed[0][0] if parsed else tag
