"""Self-supervised training pairs from a collection's own structure (no labels needed).

A heading says what its section is about, in few words, much like a question does:

- `heading`: a section's heading path ("Page > Section > Subsection") -> the section's first chunk
  (its lead), the body only (the header line the indexer prefixes is left out, or the pair would
  be a string match);
- `subheading`: the last heading alone -> the section's second chunk, for a section of more than
  one chunk under a path of more than one level: short headings are what questions look like,
  and a section's deeper passages belong to its heading too.

Chunks without a heading path (plain text stored with an empty title) give no pair. Every anchor
is used once: two pairs with the same anchor in one batch would be each other's false negative.
Nothing here reads queries or relevance labels.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

MIN_ANCHOR_CHARS = 3
MIN_POSITIVE_CHARS = 40
"""Shorter texts say too little to learn from (a heading alone, a code fragment)."""


class SectionChunk(Protocol):
    """A chunk's place and text (a stored `Chunk` or a `ChunkDraft`)."""

    @property
    def section_path(self) -> tuple[str, ...]: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class TrainingPair:
    """An anchor (query-like text) and the passage it should retrieve; `kind` says which rule."""

    anchor: str
    positive: str
    kind: str


def document_pairs(chunks: Sequence[SectionChunk]) -> list[TrainingPair]:
    """The pairs one document's chunks (in ordinal order) give."""
    sections: dict[tuple[str, ...], list[SectionChunk]] = {}
    for chunk in chunks:
        path = tuple(part.strip() for part in chunk.section_path if part.strip())
        if path:
            sections.setdefault(path, []).append(chunk)
    pairs: list[TrainingPair] = []
    for path, members in sections.items():
        lead = members[0].text.strip()
        anchor = " > ".join(path)
        pairs.append(TrainingPair(anchor, lead, "heading"))
        if len(path) > 1 and len(members) > 1:
            pairs.append(TrainingPair(path[-1], members[1].text.strip(), "subheading"))
    return [
        p
        for p in pairs
        if len(p.anchor.strip()) >= MIN_ANCHOR_CHARS and len(p.positive) >= MIN_POSITIVE_CHARS
    ]


def structure_pairs(documents: Iterable[Sequence[SectionChunk]]) -> list[TrainingPair]:
    """Pairs of every document, each anchor (case-insensitive, stripped) and positive once,
    in document order."""
    seen_anchors: set[str] = set()
    seen_positives: set[str] = set()
    pairs: list[TrainingPair] = []
    for chunks in documents:
        for pair in document_pairs(chunks):
            anchor_key = pair.anchor.strip().casefold()
            if anchor_key in seen_anchors or pair.positive in seen_positives:
                continue
            seen_anchors.add(anchor_key)
            seen_positives.add(pair.positive)
            pairs.append(TrainingPair(pair.anchor.strip(), pair.positive, pair.kind))
    return pairs


def split_pairs(
    pairs: Sequence[TrainingPair], held_out_share: float, max_pairs: int, seed: int
) -> tuple[list[TrainingPair], list[TrainingPair]]:
    """(training, held-out): a seeded shuffle of at most `max_pairs` pairs, `held_out_share` of
    them (at least one) held out for early stopping."""
    chosen = list(pairs)
    random.Random(seed).shuffle(chosen)
    chosen = chosen[:max_pairs]
    held = max(1, round(len(chosen) * held_out_share))
    return chosen[held:], chosen[:held]
