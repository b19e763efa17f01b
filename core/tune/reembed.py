"""Re-embedding every live chunk (and section) of a collection with another model, into a new
dense engine and new section vectors."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from core.catalog.collection import Collection
from core.dense.engine_factory import DenseEngine, create_dense_engine
from core.embed.protocol import Embedder
from core.embed.section_context import chunk_vectors
from core.embed.section_vectors import plain_chunk_vectors, plain_text_of, section_vectors
from core.models import Chunk, SourceType
from core.store.records import SectionVectors

FETCH_BATCH = 2048
EMBED_DOCUMENTS = 32
"""Documents embedded per model call (their chunks in one batch, their sections in one more)."""


@dataclass(frozen=True, slots=True)
class Reembedded:
    """A collection's vectors computed with another model: every chunk's (`row_ids` int64 (n,),
    `vectors` float32 (n, d)) and, when asked for, every document's section vectors (`sections`:
    (document id, vectors), one entry per document), with the seconds each kind took."""

    row_ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]
    sections: tuple[tuple[str, SectionVectors], ...]
    chunk_seconds: float
    section_seconds: float

    @property
    def section_count(self) -> int:
        """Section vectors computed (over all documents)."""
        return sum(len(vectors.paths) for _, vectors in self.sections)


def live_documents(collection: Collection) -> list[list[Chunk]]:
    """Every live chunk, grouped by document (in first-row order), each in ordinal order.

    Call while the collection's writes are blocked, or the groups may mix two sequences."""
    by_document: dict[str, list[Chunk]] = {}
    for row_ids, _ in collection.store.iter_live_vectors(batch_size=FETCH_BATCH):
        chunks = collection.store.get_chunks([int(i) for i in row_ids])
        for row_id in row_ids:
            chunk = chunks.get(int(row_id))
            if chunk is not None:
                by_document.setdefault(chunk.document_id, []).append(chunk)
    return [sorted(chunks, key=lambda c: c.ordinal) for chunks in by_document.values()]


def whole_texts(collection: Collection, documents: Sequence[list[Chunk]]) -> list[str | None]:
    """Per document of `documents`, what the indexer passed `section_vectors` as its `whole`:
    the stored text of a plain-text document, None for the others (`plain_text_of`). Call while
    the collection's writes are blocked, as for `live_documents`."""
    out: list[str | None] = []
    for chunks in documents:
        if not chunks or chunks[0].source_type is not SourceType.TEXT:
            out.append(None)
            continue
        stored = collection.store.get_document(chunks[0].document_id)
        out.append(None if stored is None else plain_text_of(stored.source_type, stored.text))
    return out


def reembed_documents(
    documents: list[list[Chunk]],
    embedder: Embedder,
    section_lead_weight: float,
    wholes: Sequence[str | None] | None = None,
    progress: Callable[[int, int], None] = lambda done, total: None,
    should_stop: Callable[[], bool] = lambda: False,
) -> Reembedded:
    """Every chunk of `documents` computed as the indexer computes it (`chunk_vectors`: header
    line, section lead mix) and, when `wholes` is given (per document: its plain text or None,
    see `whole_texts`), every section vector as the indexer computes it (`section_vectors`,
    reusing plain chunk vectors). `progress(done, total)` counts chunks; `should_stop` is polled
    between model calls (InterruptedError)."""
    total = sum(len(chunks) for chunks in documents)
    row_ids = np.empty(total, dtype=np.int64)
    vectors = np.empty((total, embedder.dimension), dtype=np.float32)
    sections: list[tuple[str, SectionVectors]] = []
    chunk_seconds = section_seconds = 0.0
    done = 0
    for start in range(0, len(documents), EMBED_DOCUMENTS):
        if should_stop():
            raise InterruptedError("re-embedding was cancelled")
        batch = documents[start : start + EMBED_DOCUMENTS]
        texts = [[(c.section_path, c.text) for c in d] for d in batch]
        started = time.perf_counter()
        block = chunk_vectors(embedder, texts, section_lead_weight)
        chunk_seconds += time.perf_counter() - started
        if wholes is not None:
            if should_stop():
                raise InterruptedError("re-embedding was cancelled")
            started = time.perf_counter()
            reusable = plain_chunk_vectors(texts, block, section_lead_weight)
            found = section_vectors(
                embedder, texts, wholes[start : start + EMBED_DOCUMENTS], reusable
            )
            sections += [(d[0].document_id, v) for d, v in zip(batch, found, strict=True) if d]
            section_seconds += time.perf_counter() - started
        ids = [c.row_id for d in batch for c in d]
        row_ids[done : done + len(ids)] = ids
        vectors[done : done + len(ids)] = block
        done += len(ids)
        progress(done, total)
    return Reembedded(row_ids, vectors, tuple(sections), chunk_seconds, section_seconds)


def build_engine(
    collection: Collection, row_ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]
) -> DenseEngine:
    """A new dense engine of the collection's kind holding `vectors` under `row_ids`."""
    engine = create_dense_engine(collection.config.dense, vectors.shape[1], collection.device)
    if len(row_ids):
        engine.index.add(row_ids, vectors)
    return engine
