"""Section vectors: one vector per section of a document, stored beside its chunk vectors.

A 200-token chunk loses what makes its section match a question (the heading, the opening
sentences), and a best-chunk ranking gives a section with many chunks many tickets. So each
section (the chunks sharing a section path) is embedded once more, whole: its heading path as a
header line, then its chunks' text in order, cut to `SECTION_TEXT_CHARS` (the model reads only
its first 256 tokens anyway). At query time a chunk's dense score is mixed with its section's
(`core/retrieve/section_scores.py`), so a section ranks by what it is about as well as by its best
passage, while the chunks still choose the passage the context quotes.

At most one extra embedding per section: a document of a flat FAQ is one section (one extra text
per document); a Markdown guide has one per heading. A section whose text is exactly one of its
chunk's embedding texts (a section of one chunk) reuses that chunk's vector.

The indexer computes them at upsert, and a tune (core/tune/reembed.py) recomputes them with the
tuned model through the same `section_vectors` + `plain_chunk_vectors`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from core.embed.embedding_text import embedding_text
from core.embed.protocol import Embedder
from core.models import SourceType
from core.store.records import NO_SECTIONS, SectionVectors

SECTION_TEXT_CHARS = 4000
"""Characters of a section's text embedded: more than 256 tokens of any text, so the model's own
window is what cuts, and the tokenizer never sees a whole long chapter."""

Section = tuple[str, ...]
DocumentChunks = Sequence[tuple[Section, str]]
"""One document's chunks in order, each as (section path, text)."""


def document_sections(
    chunks: DocumentChunks, whole: str | None = None
) -> list[tuple[Section, str]]:
    """Each distinct section path of `chunks` (first-appearance order) with the text its
    section vector embeds: the path as a header line, then the section's chunks joined.

    `whole`: the document's own text when it is plain text, used verbatim when the document is a
    single section (its text is exactly that section's, without the chunker's seams).
    """
    bodies: dict[Section, list[str]] = {}
    for path, text in chunks:
        bodies.setdefault(tuple(path), []).append(text)
    if whole and len(bodies) == 1:
        bodies = {path: [whole] for path in bodies}
    out: list[tuple[Section, str]] = []
    for path, texts in bodies.items():
        body = "\n".join(texts)[:SECTION_TEXT_CHARS]
        out.append((path, embedding_text(path, body)))
    return out


def section_vectors(
    embedder: Embedder,
    documents: Sequence[DocumentChunks],
    wholes: Sequence[str | None] | None = None,
    embedded: Mapping[str, np.ndarray] | None = None,
) -> list[SectionVectors]:
    """The section vectors of each document (in order), embedded in one batch; `wholes`: per
    document, its plain text or None (see `document_sections`). `embedded`: vectors already
    computed, by text (the chunks' plain vectors): a section whose text is one of them (a section
    of one chunk) reuses it instead of embedding the same text again."""
    texts_of = wholes if wholes is not None else [None] * len(documents)
    sections = [
        document_sections(chunks, whole) for chunks, whole in zip(documents, texts_of, strict=True)
    ]
    if not any(sections):
        return [NO_SECTIONS for _ in documents]
    known = embedded or {}
    texts = list(dict.fromkeys(t for doc in sections for _, t in doc if t not in known))
    fresh = (
        np.asarray(embedder.embed_documents(texts), dtype=np.float32)
        if texts
        else np.empty((0, embedder.dimension), dtype=np.float32)
    )
    by_text = {**known, **dict(zip(texts, fresh, strict=True))}
    vectors = np.asarray([by_text[t] for doc in sections for _, t in doc], dtype=np.float32)
    out: list[SectionVectors] = []
    offset = 0
    for doc in sections:
        block = vectors[offset : offset + len(doc)]
        out.append(SectionVectors(tuple(path for path, _ in doc), block) if doc else NO_SECTIONS)
        offset += len(doc)
    return out


def plain_chunk_vectors(
    documents: Sequence[DocumentChunks], vectors: np.ndarray, lead_weight: float
) -> dict[str, np.ndarray]:
    """The chunk vectors of `documents` (float32 (n, d), in order) by embedding text, when they
    are the plain embeddings (no section lead mixed in, `lead_weight` 0): what `section_vectors`
    may reuse (its `embedded`)."""
    if lead_weight != 0.0:
        return {}
    texts = [embedding_text(path, text) for chunks in documents for path, text in chunks]
    return dict(zip(texts, vectors, strict=True))


def plain_text_of(source_type: SourceType, text: str) -> str | None:
    """A document's `whole` for `section_vectors`: its own text when it is plain text (a single
    section embeds it verbatim, without the chunker's seams), else None."""
    return text if source_type is SourceType.TEXT else None
