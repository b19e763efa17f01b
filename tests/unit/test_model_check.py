"""ModelCheck: a collection is served only by the model that indexed it (real model, real store).

"Another model" is the real model with its vectors rotated: same width, same tokenizer, a
different space, the way a second 384-d checkpoint would be.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.model_check import ModelCheck
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.errors import FailedPrecondition
from core.indexer import Indexer
from core.models import Document
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest
from tests.unit.test_query_embedding_cache import CountingEmbedder

DOCS = [
    Document("tea.md", "# Tea\n\nGreen tea is steeped at 80 degrees for two minutes."),
    Document("coffee.md", "# Coffee\n\nEspresso is brewed at nine bars of pressure."),
    Document("cocoa.md", "# Cocoa\n\nHot cocoa is made with milk and dark chocolate."),
    Document("mate.md", "# Mate\n\nYerba mate is sipped through a metal straw."),
]


class Rotated(CountingEmbedder):
    """Another model of the same width: the real vectors under a fixed random rotation."""

    def __init__(self, inner: SentenceTransformerEmbedder, dimension: int | None = None) -> None:
        super().__init__(inner)
        self.model_name = "/models/other-minilm"
        width = dimension or inner.dimension
        rng = np.random.default_rng(7)
        self.rotation, _ = np.linalg.qr(rng.standard_normal((inner.dimension, inner.dimension)))
        self.dimension = width

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rotated = (super().embed_documents(texts) @ self.rotation).astype(np.float32)
        return rotated[:, : self.dimension]


@pytest.fixture
def catalog(tmp_path: Path) -> CollectionCatalog:
    opened = CollectionCatalog(tmp_path)
    opened.open_all()
    return opened


def _indexed(catalog: CollectionCatalog, embedder: SentenceTransformerEmbedder) -> Collection:
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    collection = catalog.create(DEFAULT_TENANT, "drinks", config)
    Indexer(embedder, 200, 1 << 20).index(collection, DOCS)
    return collection


def test_the_indexing_model_passes_and_is_checked_once(
    catalog: CollectionCatalog, embedder: SentenceTransformerEmbedder
) -> None:
    collection = _indexed(catalog, embedder)
    counting = CountingEmbedder(embedder)
    check = ModelCheck(counting)
    for _ in range(3):
        check.require(collection)
    assert len(counting.document_batches) == 1


def test_another_model_of_the_same_width_is_failed_precondition(
    catalog: CollectionCatalog, embedder: SentenceTransformerEmbedder
) -> None:
    collection = _indexed(catalog, embedder)
    with pytest.raises(FailedPrecondition) as raised:
        ModelCheck(Rotated(embedder)).require(collection)
    message = str(raised.value)
    assert "collection 'drinks' was indexed with another embedding model" in message
    assert f"(recorded: {embedder.model_name})" in message
    assert "server's model (/models/other-minilm)" in message
    assert "re-index its documents into a new collection" in message


def test_another_width_is_failed_precondition_without_embedding(
    catalog: CollectionCatalog, embedder: SentenceTransformerEmbedder
) -> None:
    collection = _indexed(catalog, embedder)
    narrow = Rotated(embedder, dimension=128)
    with pytest.raises(FailedPrecondition) as raised:
        ModelCheck(narrow).require(collection)
    assert "holds 384-dimensional vectors" in str(raised.value)
    assert "makes 128-dimensional ones" in str(raised.value)
    assert narrow.document_batches == []


def test_an_empty_collection_is_judged_once_it_holds_chunks(
    catalog: CollectionCatalog, embedder: SentenceTransformerEmbedder
) -> None:
    config = CollectionConfig(embedding_model="", embedding_dim=embedder.dimension)
    collection = catalog.create(DEFAULT_TENANT, "empty", config)
    check = ModelCheck(Rotated(embedder))
    check.require(collection)  # nothing to compare with yet
    Indexer(embedder, 200, 1 << 20).index(collection, DOCS[:1])
    with pytest.raises(FailedPrecondition):
        check.require(collection)


def test_pipeline_and_indexer_refuse_and_write_nothing(
    catalog: CollectionCatalog, embedder: SentenceTransformerEmbedder
) -> None:
    collection = _indexed(catalog, embedder)
    other = Rotated(embedder)
    check = ModelCheck(other)
    with ThreadPoolExecutor(2) as pool:
        pipeline = RetrievalPipeline(catalog, other, pool, model_check=check)
        with pytest.raises(FailedPrecondition):
            pipeline.retrieve(RetrievalRequest(query="espresso", collection="drinks"))
    sequence = collection.store.sequence()
    indexer = Indexer(other, 200, 1 << 20, model_check=check)
    with pytest.raises(FailedPrecondition):
        indexer.index(collection, [Document("new.md", "# New\n\nRooibos has no caffeine.")])
    assert collection.store.sequence() == sequence
    assert collection.store.get_document("new.md") is None


def test_the_same_model_retrieves_through_a_checked_pipeline(
    catalog: CollectionCatalog, embedder: SentenceTransformerEmbedder
) -> None:
    _indexed(catalog, embedder)
    with ThreadPoolExecutor(2) as pool:
        pipeline = RetrievalPipeline(catalog, embedder, pool, model_check=ModelCheck(embedder))
        result = pipeline.retrieve(RetrievalRequest(query="espresso", collection="drinks"))
    assert result.hits[0].chunk.document_id == "coffee.md"
