"""Near-duplicate detection between chunk texts by word shingles.

A text's shingles are its overlapping runs of `SHINGLE_WORDS` lower-cased words (`\\w+`); a text
with fewer words has its whole word sequence as its one shingle, and a text with no words is
compared by its stripped text. A candidate is a near duplicate of an already selected text when
the Jaccard similarity of their shingle sets is at least `JACCARD_THRESHOLD` (0.9) or at least
`CONTAINMENT_THRESHOLD` (0.95) of the candidate's shingles occur in the selected text (the
candidate says nothing the selected text does not). The reverse containment (the candidate
extends a selected text) does not count: the candidate adds information.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "CONTAINMENT_THRESHOLD",
    "JACCARD_THRESHOLD",
    "SHINGLE_WORDS",
    "Shingles",
    "is_near_duplicate",
    "shingles",
]

SHINGLE_WORDS = 3
JACCARD_THRESHOLD = 0.9
CONTAINMENT_THRESHOLD = 0.95
SHINGLE_CACHE_SIZE = 2048
"""Texts whose shingles are kept (~10 KB each for a 200-token chunk)."""

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Shingles:
    """The shingle set of one text (hashes of its word runs), or the stripped text itself when
    it has no words."""

    grams: frozenset[int]
    wordless: str


@lru_cache(maxsize=SHINGLE_CACHE_SIZE)
def shingles(text: str) -> Shingles:
    """The shingles of `text` (see the module docstring)."""
    words = _WORD.findall(text.lower())
    if not words:
        return Shingles(frozenset(), text.strip())
    if len(words) < SHINGLE_WORDS:
        return Shingles(frozenset({hash(tuple(words))}), "")
    # zip over shifted views builds each run as a tuple in C (no slice per position)
    runs = zip(*(words[i:] for i in range(SHINGLE_WORDS)), strict=False)
    return Shingles(frozenset(map(hash, runs)), "")


def _duplicates(candidate: Shingles, selected: Shingles) -> bool:
    if not candidate.grams or not selected.grams:
        return (
            not candidate.grams and not selected.grams and candidate.wordless == selected.wordless
        )
    shared = len(candidate.grams & selected.grams)
    union = len(candidate.grams) + len(selected.grams) - shared
    return shared >= JACCARD_THRESHOLD * union or shared >= CONTAINMENT_THRESHOLD * len(
        candidate.grams
    )


def is_near_duplicate(candidate: Shingles, selected: Iterable[Shingles]) -> bool:
    """Whether `candidate` near-duplicates any of `selected`."""
    return any(_duplicates(candidate, other) for other in selected)
