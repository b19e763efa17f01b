"""The pipeline's context: it follows the final ranking (a rerank's order, linked chunks after
their origins, memories where fusion put them), and its size from stored counts is exact."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.catalog.storage_backend import StorageBackend
from core.context.budget import ContextBudget
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.indexer import Indexer
from core.memory.records import MemoryDraft
from core.models import Document
from core.retrieve.expansion_policy import ExpansionPolicy
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest

PAGES = [
    Document(
        "ports",
        "# Ports\n\nThe server listens on port 50051 unless server.port is set; its "
        "[logs](logs.md) say which port it bound.",
        source_path="ports.md",
    ),
    Document(
        "proxy",
        "# Proxy\n\nPut the server behind a proxy: see [ports](ports.md).",
        source_path="proxy.md",
    ),
    Document(
        "tuning",
        "# Tuning\n\nefSearch trades recall for latency in the HNSW index.",
        source_path="tuning.md",
    ),
    Document(
        "logs",
        "# Logs\n\nThe server writes JSON logs to standard error.",
        source_path="logs.md",
    ),
]


class PrefersWord:
    """A reranker with a known answer: passages containing `word` score 1, others 0.

    Stands in for a cross-encoder only to make the rerank order certain; the ordering under test
    is the pipeline's, not the model's.
    """

    def __init__(self, word: str) -> None:
        self._word = word
        self.name = f"prefers:{word}"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return [1.0 if self._word in p else 0.0 for p in passages]


def _catalog(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, backend: StorageBackend | None = None
) -> CollectionCatalog:
    catalog = CollectionCatalog(tmp_path, backend=backend)
    catalog.open_all()
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    collection = catalog.create(DEFAULT_TENANT, "docs", config)
    Indexer(embedder, 200, 1 << 20).index(collection, PAGES)
    return catalog


@pytest.fixture
def executor() -> Iterator[ThreadPoolExecutor]:
    pool = ThreadPoolExecutor(2)
    yield pool
    pool.shutdown()


def test_the_context_follows_the_rerank_order(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    executor: ThreadPoolExecutor,
    storage_backend: Callable[[], StorageBackend],
) -> None:
    catalog = _catalog(tmp_path, embedder, storage_backend())
    request = RetrievalRequest(query="which port does the server listen on", collection="docs")
    plain = RetrievalPipeline(catalog, embedder, executor).retrieve(request)
    assert plain.hits[0].chunk.document_id == "ports"
    reranked = RetrievalPipeline(catalog, embedder, executor, reranker=PrefersWord("JSON"))
    result = reranked.retrieve(replace(request, rerank=True))
    assert result.hits[0].chunk.document_id == "logs"
    assert result.hits[0].score < plain.hits[0].score  # the fused score was not what ranked it
    first = result.context.included_row_ids[0]
    assert first == result.hits[0].chunk.row_id
    assert result.context.citations[0].chunk_id == result.hits[0].chunk.chunk_id


def test_memories_keep_their_place_when_expansion_adds_linked_chunks(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    executor: ThreadPoolExecutor,
    storage_backend: Callable[[], StorageBackend],
) -> None:
    catalog = _catalog(tmp_path, embedder, storage_backend())
    collection = catalog.get(DEFAULT_TENANT, "docs")
    memory = MemoryDraft("The user runs the server on port 7000 behind a proxy.", importance=1.0)
    (memory_id,) = collection.memories().add([memory], embedder.embed_documents([memory.text]))
    assert collection.memory_count() == 1
    pipeline = RetrievalPipeline(catalog, embedder, executor)
    base = RetrievalRequest(
        query="which port does the server use behind a proxy",
        collection="docs",
        top_k=3,
        use_memory=True,
    )
    plain = pipeline.retrieve(base)
    expanded = pipeline.retrieve(replace(base, expansion=ExpansionPolicy(enabled=True)))
    unexpanded = [h.chunk.chunk_id for h in expanded.hits if not h.expanded_from]
    assert unexpanded == [h.chunk.chunk_id for h in plain.hits]
    assert memory_id in unexpanded[:2]  # fused near the top, and it stays there
    assert any(h.expanded_from for h in expanded.hits)
    for position, hit in enumerate(expanded.hits):
        assert hit.rank == position + 1
        if hit.expanded_from:
            before = [h.chunk.chunk_id for h in expanded.hits[:position]]
            origin = before.index(hit.expanded_from)
            assert all(h.expanded_from for h in expanded.hits[origin + 1 : position])


def test_the_context_size_from_stored_counts_is_exact(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    executor: ThreadPoolExecutor,
    storage_backend: Callable[[], StorageBackend],
) -> None:
    catalog = _catalog(tmp_path, embedder, storage_backend())
    pipeline = RetrievalPipeline(catalog, embedder, executor)
    for limit in (12, 40, 4096):
        request = RetrievalRequest(
            query="how does the server log its port",
            collection="docs",
            budget=ContextBudget(max_tokens=limit),
        )
        context = pipeline.retrieve(request).context
        assert context.token_estimate == embedder.count_tokens(context.text) <= limit
    assert len(context.included_row_ids) == len(PAGES)  # the largest budget took every page
