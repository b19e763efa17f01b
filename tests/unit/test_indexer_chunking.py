"""The indexer chunks with the collection's chunking (or a per-batch override) and the link graph
of what it writes resolves, titles and all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.indexer import Indexer, Outcome
from core.ingest.chunking_spec import ChunkerKind, ChunkingSpec
from core.models import Document, EdgeKind, SourceType
from core.store.link_graph import SECTION_LINK_WEIGHT
from tests.unit.python_doc_pages import LIBRARY_FAQ_HTML, OS_PAGE, PROGRAMMING_FAQ


@pytest.fixture
def collection(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> Iterator[Collection]:
    config = CollectionConfig(
        chunk_max_tokens=48,
        chunker_kind=ChunkerKind.FIXED,
        chunk_overlap_tokens=8,
        embedding_model=embedder.model_name,
        embedding_dim=embedder.dimension,
    )
    opened = Collection.open("docs", tmp_path / "docs", config)
    yield opened
    opened.close()


def texts(collection: Collection, document_id: str) -> list[str]:
    stored = collection.store.get_document(document_id)
    assert stored is not None
    return [c.text for c in stored.chunks]


def test_the_collection_chunking_is_the_default(
    collection: Collection, embedder: SentenceTransformerEmbedder
) -> None:
    indexer = Indexer(embedder, 200, 1 << 20)

    (outcome,) = indexer.index(collection, [Document("faq/programming.md", PROGRAMMING_FAQ)])

    chunks = texts(collection, "faq/programming.md")
    assert outcome.outcome is Outcome.UPSERTED and outcome.chunk_count == len(chunks) > 5
    assert all(embedder.count_tokens(text) <= 48 for text in chunks)
    assert chunks[0].startswith("# Programming FAQ\n\n## How do I create a higher order function?")
    for previous, following in zip(chunks, chunks[1:], strict=False):
        assert previous.split()[-1] in following.split()[:8]  # the windows overlap


def test_a_batch_may_override_the_chunking(
    collection: Collection, embedder: SentenceTransformerEmbedder
) -> None:
    indexer = Indexer(embedder, 200, 1 << 20)
    sentences = ChunkingSpec(ChunkerKind.SENTENCE, 64, 0)

    indexer.index(collection, [Document("faq/programming.md", PROGRAMMING_FAQ)], sentences)

    chunks = texts(collection, "faq/programming.md")
    assert chunks[0].startswith("You have two choices")
    assert all(embedder.count_tokens(text) <= 64 for text in chunks)


def test_links_between_indexed_documents_resolve(
    collection: Collection, embedder: SentenceTransformerEmbedder
) -> None:
    indexer = Indexer(embedder, 200, 1 << 20)
    structure = ChunkingSpec(ChunkerKind.STRUCTURE, 64)
    faq = Document(
        "faq/library.html",
        LIBRARY_FAQ_HTML,
        SourceType.HTML,
        "docs/faq/library.html",
        title="Library and Extension FAQ",
    )
    os_page = Document("library/os.md", OS_PAGE, source_path="docs/library/os.md", title="os")

    indexer.index(collection, [faq], structure)  # before its target exists
    indexer.index(collection, [os_page], structure)

    stored = collection.store.get_document("faq/library.html")
    target = collection.store.get_document("library/os.md")
    assert stored is not None and target is not None
    getcwd = next(c.row_id for c in target.chunks if "working directory" in c.text)
    source = next(c.row_id for c in stored.chunks if "os.html#os.getcwd" in c.text)
    edges = collection.store.edges_from([source])[source]
    assert (edges[0].target_row_id, edges[0].kind, edges[0].weight) == (
        getcwd,
        EdgeKind.LINK,
        SECTION_LINK_WEIGHT,
    )


def test_documents_over_the_chunk_limit_fail_alone(tmp_path, embedder) -> None:  # type: ignore[no-untyped-def]
    from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
    from core.catalog.collection_config import CollectionConfig
    from core.indexer import Indexer, Outcome
    from core.models import Document

    catalog = CollectionCatalog(tmp_path)
    catalog.open_all()
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    collection = catalog.create(DEFAULT_TENANT, "limits", config)
    long_text = "\n\n".join(
        f"Paragraph {i} talks about topic {i} at length." * 8 for i in range(12)
    )
    outcomes = Indexer(embedder, 64, 1 << 20, max_chunks_per_document=3).index(
        collection, [Document("big", long_text), Document("small", "One short paragraph.")]
    )
    assert outcomes[0].outcome is Outcome.FAILED
    assert outcomes[0].error.startswith("documents.text: document 'big' makes ")
    assert outcomes[0].error.endswith(
        "chunks; the limit is 3 (limits.max_chunks_per_document); split it or raise "
        "chunking.max_tokens"
    )
    assert outcomes[1].outcome is Outcome.UPSERTED
    catalog.close()
