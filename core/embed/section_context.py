"""Chunk vectors that carry their section's lead: one vector per chunk, two granularities in it.

A chunk of 200 tokens often loses what makes its section match a question: the heading and the
opening sentences. A best-chunk ranking also gives a section with many chunks many tickets. Each
chunk's vector is therefore mixed with its section's lead vector (the section's first chunk,
heading path included, which the indexer embeds anyway):

    v = normalize(chunk + w * lead)

All chunks of a section share the lead component, so the section ranks by what it is about
first and by its best passage second, while each chunk still picks the passage the context
quotes. The first chunk of a section is its own lead, so its vector is the plain one. `w = 0`
gives plain chunk vectors (collections indexed before this existed). Nothing is added at query
time: one vector per chunk, the same index, the same latency.

The indexer writes these vectors and the model check recomputes them the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from core.embed.embedding_text import embedding_text
from core.embed.protocol import Embedder

Section = tuple[str, ...]
DocumentChunks = Sequence[tuple[Section, str]]
"""One document's chunks in order, each as (section path, text)."""


def lead_rows(chunks: DocumentChunks) -> list[int]:
    """For each chunk, the position (within the document) of its section's first chunk."""
    first: dict[Section, int] = {}
    return [first.setdefault(path, position) for position, (path, _) in enumerate(chunks)]


def with_section_lead(
    vectors: npt.NDArray[np.float32], leads: Sequence[int], weight: float
) -> npt.NDArray[np.float32]:
    """`vectors` (one document's chunks, unit rows) mixed with their lead rows, unit length."""
    if weight == 0.0 or len(vectors) == 0:
        return vectors
    mixed = vectors + np.float32(weight) * vectors[np.asarray(leads, dtype=np.int64)]
    norms = np.linalg.norm(mixed, axis=1, keepdims=True)
    unit: npt.NDArray[np.float32] = (mixed / np.maximum(norms, np.float32(1e-12))).astype(
        np.float32
    )
    return unit


def chunk_vectors(
    embedder: Embedder, documents: Sequence[DocumentChunks], lead_weight: float
) -> npt.NDArray[np.float32]:
    """The stored vector of every chunk of `documents` (in order), embedded in one batch."""
    texts = [embedding_text(path, text) for chunks in documents for path, text in chunks]
    if not texts:
        return np.empty((0, embedder.dimension), dtype=np.float32)
    vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
    out = np.empty_like(vectors)
    offset = 0
    for chunks in documents:
        block = vectors[offset : offset + len(chunks)]
        out[offset : offset + len(chunks)] = with_section_lead(
            block, lead_rows(chunks), lead_weight
        )
        offset += len(chunks)
    return out
