"""Re-embedding every live chunk of a collection with another model, into a new dense engine."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from core.catalog.collection import Collection
from core.dense.engine_factory import DenseEngine, create_dense_engine
from core.embed.protocol import Embedder
from core.embed.section_context import chunk_vectors
from core.models import Chunk

FETCH_BATCH = 2048
EMBED_DOCUMENTS = 32
"""Documents embedded per model call (their chunks in one batch)."""


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


def reembed_documents(
    documents: list[list[Chunk]],
    embedder: Embedder,
    section_lead_weight: float,
    progress: Callable[[int, int], None] = lambda done, total: None,
    should_stop: Callable[[], bool] = lambda: False,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """(row ids int64 (n,), vectors float32 (n, d)) of every chunk of `documents`, computed as
    the indexer computes them (`chunk_vectors`: header line, section lead mix). `progress(done,
    total)` counts chunks; `should_stop` is polled between batches (InterruptedError)."""
    total = sum(len(chunks) for chunks in documents)
    row_ids = np.empty(total, dtype=np.int64)
    vectors = np.empty((total, embedder.dimension), dtype=np.float32)
    done = 0
    for start in range(0, len(documents), EMBED_DOCUMENTS):
        if should_stop():
            raise InterruptedError("re-embedding was cancelled")
        batch = documents[start : start + EMBED_DOCUMENTS]
        block = chunk_vectors(
            embedder, [[(c.section_path, c.text) for c in d] for d in batch], section_lead_weight
        )
        ids = [c.row_id for d in batch for c in d]
        row_ids[done : done + len(ids)] = ids
        vectors[done : done + len(ids)] = block
        done += len(ids)
        progress(done, total)
    return row_ids, vectors


def build_engine(
    collection: Collection, row_ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]
) -> DenseEngine:
    """A new dense engine of the collection's kind holding `vectors` under `row_ids`."""
    engine = create_dense_engine(collection.config.dense, vectors.shape[1], collection.device)
    if len(row_ids):
        engine.index.add(row_ids, vectors)
    return engine
