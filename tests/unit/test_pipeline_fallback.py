"""The pipeline degrades to BM25 when the embedding model fails, and says so."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.catalog.storage_backend import StorageBackend
from core.embed.delegating_embedder import DelegatingEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.errors import Overloaded
from core.indexer import Indexer
from core.models import Document
from core.retrieve.modes import RetrievalMode
from core.retrieve.pipeline import EMBEDDER_FAILED, RetrievalPipeline
from core.retrieve.request import RetrievalRequest


class QueriesFail(DelegatingEmbedder):
    """The real model for documents; query embedding raises `error` (a GPU out of memory, say)."""

    def __init__(self, inner: SentenceTransformerEmbedder, error: Exception) -> None:
        super().__init__(inner)
        self._error = error

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise self._error


def _pipeline(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    error: Exception,
    backend: StorageBackend | None = None,
) -> RetrievalPipeline:
    catalog = CollectionCatalog(tmp_path, backend=backend)
    catalog.open_all()
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    collection = catalog.create(DEFAULT_TENANT, "docs", config)
    Indexer(embedder, 200, 1 << 20).index(
        collection,
        [
            Document("a", "# Ports\n\nThe server listens on port 50051."),
            Document("b", "# Tuning\n\nefSearch trades recall for latency."),
        ],
    )
    return RetrievalPipeline(catalog, QueriesFail(embedder, error), ThreadPoolExecutor(2))  # type: ignore[arg-type]


def test_a_failing_embedder_falls_back_to_bm25_with_a_warning(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    storage_backend: Callable[[], StorageBackend],
) -> None:
    pipeline = _pipeline(tmp_path, embedder, RuntimeError("CUDA out of memory"), storage_backend())
    for mode in (RetrievalMode.HYBRID, RetrievalMode.DENSE):
        result = pipeline.retrieve(RetrievalRequest("which port", "docs", mode=mode))
        assert result.mode is RetrievalMode.LEXICAL
        assert result.hits[0].chunk.document_id == "a"
        assert result.warnings == (EMBEDDER_FAILED.format(reason="RuntimeError"),)


def test_an_overloaded_embedder_is_not_hidden(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    storage_backend: Callable[[], StorageBackend],
) -> None:
    pipeline = _pipeline(
        tmp_path, embedder, Overloaded("queue full", retry_after_s=0.1), storage_backend()
    )
    with pytest.raises(Overloaded):
        pipeline.retrieve(RetrievalRequest("which port", "docs"))
