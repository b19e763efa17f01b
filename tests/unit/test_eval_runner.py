"""`evaluate_configurations`: each query reaches the model once, whatever the configurations;
`index_dataset` reads the bodies as plain text or as Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.delegating_embedder import DelegatingEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.eval.beir import BeirDataset, BeirDoc
from core.eval.runner import BASELINE, evaluate_configurations, index_dataset
from core.indexer import Indexer
from core.models import SourceType
from core.retrieve.modes import RetrievalMode
from core.retrieve.request import RetrievalRequest


class CountingEmbedder(DelegatingEmbedder):
    """The real embedder, counting each query text it is asked to embed."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        super().__init__(inner)
        self.query_texts: list[str] = []

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.query_texts.extend(texts)
        return self.inner.embed_queries(texts)


DATASET = BeirDataset(
    corpus={
        "d1": BeirDoc("d1", "Strings", "Python strings are immutable once they are created."),
        "d2": BeirDoc("d2", "Copying", "Use copy.deepcopy for a deep copy of an object."),
        "d3": BeirDoc("d3", "Files", "Iterate over an open file to read it line by line."),
    },
    queries={
        "q1": "Why can't I change a string?",
        "q2": "How do I duplicate an object?",
        "q3": "read a file line by line",
    },
    qrels={"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}},
)


def test_each_query_is_embedded_once_for_all_configurations(
    embedder: SentenceTransformerEmbedder,
) -> None:
    counting = CountingEmbedder(embedder)
    base = RetrievalRequest(query="", collection="", top_k=10)
    configurations = {
        "dense": replace(base, mode=RetrievalMode.DENSE),
        "hybrid": replace(base, mode=RetrievalMode.HYBRID),
        "dense, chunks only": replace(base, mode=RetrievalMode.DENSE, section_weight=0.0),
    }
    config = CollectionConfig(
        chunk_max_tokens=200, embedding_model=counting.model_name, embedding_dim=counting.dimension
    )
    results = evaluate_configurations(DATASET, counting, configurations, config, k=3)
    assert set(results) == {BASELINE, *configurations}
    # the baseline embeds the queries in one batch; the pipeline once more per query, not per
    # configuration
    assert sorted(counting.query_texts) == sorted(
        [*DATASET.queries.values(), *DATASET.queries.values()]
    )
    assert results["dense"]["mrr@3"] == 1.0


def test_markdown_bodies_are_split_at_their_own_headings(
    embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    manual = (
        "## SYNOPSIS\n\nls [OPTION]... [FILE]...\n\n## DESCRIPTION\n\nList information about files."
    )
    dataset = BeirDataset(corpus={"ls.1": BeirDoc("ls.1", "ls(1)", manual)}, queries={}, qrels={})
    config = CollectionConfig(
        chunk_max_tokens=200, embedding_model=embedder.model_name, embedding_dim=embedder.dimension
    )
    catalog = CollectionCatalog(tmp_path)
    catalog.open_all()
    indexer = Indexer(embedder, config.chunk_max_tokens, max_document_bytes=1 << 20)
    index_dataset(dataset, catalog, indexer, config, name="plain")
    index_dataset(dataset, catalog, indexer, config, name="md", source_type=SourceType.MARKDOWN)
    paths = {}
    for name in ("plain", "md"):
        stored = catalog.get(DEFAULT_TENANT, name).store.get_document("ls.1")
        assert stored is not None
        paths[name] = [chunk.section_path for chunk in stored.chunks]
    catalog.close()
    assert paths["plain"] == [("ls(1)",)]
    assert paths["md"] == [("ls(1)", "SYNOPSIS"), ("ls(1)", "DESCRIPTION")]
