"""Whether a collection's stored vectors come from the embedding model the server runs.

Vectors of two models live in different spaces, also when their widths agree: queries embedded
by another model than the one that indexed a collection retrieve noise without any error, and
writes would mix two spaces in one index. `ModelCheck` re-embeds a few stored chunks with the
serving model and compares them with their stored vectors: the same model reproduces them
(cosine about 1; fp16 against fp32 stays above 0.999), another model does not. The model's
name is no help here: it is a path, which moves with every install.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable

import numpy as np

from core.catalog.collection import Collection
from core.embed.protocol import Embedder
from core.embed.section_context import chunk_vectors
from core.errors import FailedPrecondition
from core.models import Chunk

__all__ = ["SAMPLE_CHUNKS", "SAME_MODEL_MIN_COSINE", "ModelCheck"]

logger = logging.getLogger(__name__)

SAMPLE_CHUNKS = 3
"""Stored chunks re-embedded per check (the lowest live row ids)."""
SAME_MODEL_MIN_COSINE = 0.98
"""Each re-embedded chunk must reach this cosine with its stored vector."""


class ModelCheck:
    """Checks each opened collection once against `embedder`; thread-safe.

    A verdict is kept per Collection object, so a restored or reopened collection is checked
    again; an empty collection is not judged until it holds chunks.
    """

    def __init__(
        self, embedder: Embedder, embedders: Callable[[Collection], Embedder] | None = None
    ) -> None:
        """`embedders`: the model of each collection (a tuned collection has its own copy,
        core/tune); `embedder` for all when None. A verdict holds until the collection's tuned
        model changes."""
        self._embedder = embedder
        self._embedders = embedders
        self._verdicts: weakref.WeakKeyDictionary[Collection, tuple[str, str]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def require(self, collection: Collection) -> None:
        """Raise FailedPrecondition when `collection` was indexed with another model."""
        verdict = self._verdict(collection)
        if verdict is None:
            with self._lock:
                verdict = self._verdict(collection)
                if verdict is None:
                    verdict = self._judge(collection)
        if verdict:
            raise FailedPrecondition(verdict)

    def _verdict(self, collection: Collection) -> str | None:
        kept = self._verdicts.get(collection)
        if kept is None or kept[0] != collection.config.tuned_model:
            return None
        return kept[1]

    def _model(self, collection: Collection) -> Embedder:
        return self._embedder if self._embedders is None else self._embedders(collection)

    def _judge(self, collection: Collection) -> str:
        """The verdict, kept for the collection: "" for the same model, else the error message;
        "" and nothing kept while the collection holds no chunks."""
        embedder = self._model(collection)
        model = collection.config.tuned_model
        stored_dim = collection.config.embedding_dim
        if stored_dim and stored_dim != embedder.dimension:
            verdict = (
                f"collection '{collection.name}' holds {stored_dim}-dimensional vectors but the "
                f"server's embedding model ({embedder.model_name}) makes {embedder.dimension}-"
                f"dimensional ones; {_FIX}"
            )
            self._verdicts[collection] = (model, verdict)
            return verdict
        row_ids, stored = next(
            collection.store.iter_live_vectors(batch_size=SAMPLE_CHUNKS), ([], [])
        )
        chunks = collection.store.get_chunks([int(i) for i in row_ids])
        kept = [position for position, i in enumerate(row_ids) if int(i) in chunks]  # not deleted
        if not kept:
            return ""  # nothing indexed yet: the first write decides, the next check judges
        sampled = [chunks[int(row_ids[position])] for position in kept]
        fresh = self._fresh_vectors(collection, sampled, embedder)
        cosines = np.sum(fresh * np.asarray(stored, dtype=np.float32)[kept], axis=1)
        worst = float(cosines.min())
        verdict = ""
        if worst < SAME_MODEL_MIN_COSINE:
            indexed_with = collection.config.embedding_model or "unrecorded"
            verdict = (
                f"collection '{collection.name}' was indexed with another embedding model "
                f"(recorded: {indexed_with}): re-embedding {len(sampled)} of its chunks with the "
                f"server's model ({embedder.model_name}) reproduces their stored vectors only to "
                f"cosine {worst:.3f} (the same model gives at least {SAME_MODEL_MIN_COSINE}); "
                f"{_FIX}"
            )
            logger.error("%s", verdict)
        self._verdicts[collection] = (model, verdict)
        return verdict

    def _fresh_vectors(
        self, collection: Collection, sampled: list[Chunk], embedder: Embedder
    ) -> np.ndarray:
        """The sampled chunks' vectors as the indexer would write them now: a chunk mixed with
        its section's lead (the section's first chunk in its document) is recomputed with it."""
        weight = collection.config.section_lead_weight
        documents: list[list[tuple[tuple[str, ...], str]]] = []
        for chunk in sampled:
            lead = self._section_lead(collection, chunk) if weight else chunk
            pair = [chunk] if lead.ordinal == chunk.ordinal else [lead, chunk]
            documents.append([(c.section_path, c.text) for c in pair])
        vectors = chunk_vectors(embedder, documents, weight)
        ends = np.cumsum([len(d) for d in documents]) - 1
        fresh: np.ndarray = vectors[ends]
        return fresh

    @staticmethod
    def _section_lead(collection: Collection, chunk: Chunk) -> Chunk:
        stored = collection.store.get_document(chunk.document_id)
        chunks = stored.chunks if stored is not None else []
        return next((c for c in chunks if c.section_path == chunk.section_path), chunk)


_FIX = (
    "serve it with the model it was indexed with (model.embedding_model_path), or re-index its "
    "documents into a new collection"
)
