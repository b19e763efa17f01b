"""The write path has one owner: the indexer prepares (chunks, links, embeddings) outside any
lock, and `Collection.commit` is the only place documents are committed."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.storage_backend import StorageBackend
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.indexer import Indexer, Outcome
from core.models import ChunkDraft, Document, EdgeKind, RiskLevel, SourceType
from core.store.records import PreparedDocument
from tests.unit.test_query_embedding_cache import CountingEmbedder

GUIDE = "# Guide\n\nRead [setup](setup.md#install) first.\n\n## Usage\n\nCall the client."
SETUP = "# Setup\n\n## Install\n\nRun the installer and restart the service."


class LockWatchingEmbedder(CountingEmbedder):
    """The real embedder, noting whether the collection's write lock is held while it embeds."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        super().__init__(inner)
        self.collection: Collection | None = None
        self.locked_while_embedding: list[bool] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        assert self.collection is not None
        self.locked_while_embedding.append(self.collection.write_lock.locked())
        return super().embed_documents(texts)


@pytest.fixture
def collection(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    storage_backend: Callable[[], StorageBackend],
) -> Iterator[Collection]:
    """A new collection on each storage backend (local directory, Milvus)."""
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    backend = storage_backend()
    opened = backend.open("default", "docs", tmp_path / "docs", config, "cpu")
    yield opened
    opened.close()
    backend.close()


def _markdown(document_id: str, text: str) -> Document:
    return Document(document_id, text, SourceType.MARKDOWN, source_path=document_id)


def test_embedding_runs_without_the_write_lock(
    collection: Collection, embedder: SentenceTransformerEmbedder
) -> None:
    watching = LockWatchingEmbedder(embedder)
    watching.collection = collection
    outcomes = Indexer(watching, 200, 1 << 20).index(collection, [_markdown("guide.md", GUIDE)])
    assert [o.outcome for o in outcomes] == [Outcome.UPSERTED]
    assert watching.locked_while_embedding == [False]


def test_links_extracted_before_the_commit_become_edges(
    collection: Collection, embedder: SentenceTransformerEmbedder
) -> None:
    indexer = Indexer(embedder, 200, 1 << 20)
    indexer.index(collection, [_markdown("guide.md", GUIDE), _markdown("setup.md", SETUP)])
    guide = collection.store.get_document("guide.md")
    setup = collection.store.get_document("setup.md")
    assert guide is not None and setup is not None
    install = next(c for c in setup.chunks if c.section_path[-1:] == ("Install",))
    edges = collection.store.edges_from([guide.chunks[0].row_id])[guide.chunks[0].row_id]
    assert any(e.kind is EdgeKind.LINK and e.target_row_id == install.row_id for e in edges)


def test_concurrent_writers_all_commit_and_repeats_stay_unchanged(
    collection: Collection, embedder: SentenceTransformerEmbedder
) -> None:
    indexer = Indexer(embedder, 200, 1 << 20)
    batches = [
        [
            Document(f"w{w}d{i}", f"Writer {w} wrote note {i} about topic {w * 10 + i}.")
            for i in range(3)
        ]
        for w in range(4)
    ]
    results: dict[int, list[Outcome]] = {}

    def write(w: int) -> None:
        results[w] = [o.outcome for o in indexer.index(collection, batches[w])]

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {w: [Outcome.UPSERTED] * 3 for w in range(4)}
    version = collection.version()
    assert version.sequence == 12
    assert collection.figures().dense_sequence == collection.figures().lexical_sequence == 12
    assert collection.figures().dense_vectors == collection.store.counts()[1] == 12

    again = [o.outcome for o in indexer.index(collection, batches[0])]
    assert again == [Outcome.UNCHANGED] * 3
    assert collection.version() == version


def test_commit_skips_a_document_already_stored_with_the_same_hash(
    collection: Collection, embedder: SentenceTransformerEmbedder
) -> None:
    """Two writers prepared the same content: the second commit is an idempotent no-op."""
    indexer = Indexer(embedder, 200, 1 << 20)
    document = _markdown("setup.md", SETUP)
    indexer.index(collection, [document])
    sequence = collection.version().sequence
    before = collection.store.get_document("setup.md")
    duplicate = PreparedDocument(
        document=document,
        content_hash=document.content_hash(),
        chunks=(ChunkDraft("Run the installer and restart the service."),),
        embeddings=np.zeros((1, embedder.dimension), np.float32),
        risks=(((), RiskLevel.NONE),),
    )
    assert collection.commit([duplicate]) == [None]
    assert collection.version().sequence == sequence
    assert collection.store.get_document("setup.md") == before  # the first commit's rows stay
