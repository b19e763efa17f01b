"""`evaluate_configurations`: each query reaches the model once, whatever the configurations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from core.catalog.collection_config import CollectionConfig
from core.embed.delegating_embedder import DelegatingEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.eval.beir import BeirDataset, BeirDoc
from core.eval.runner import BASELINE, evaluate_configurations
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
