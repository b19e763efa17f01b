"""`PrecomputedQueries`: `groundwire eval` embeds each query once, the real model's vectors."""

from __future__ import annotations

import numpy as np

from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.eval.query_vectors import PrecomputedQueries

QUERIES = [
    "How do I read a file line by line?",
    "Why are default arguments shared between objects?",
    "How can I sort a list of dictionaries by a key?",
]


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed as queries."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimension = inner.dimension
        self.max_tokens = inner.max_tokens
        self.device = inner.device
        self.additive_token_counts = inner.additive_token_counts
        self.query_texts = 0

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self.query_texts += len(texts)
        return self.inner.embed_queries(texts)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


def test_known_queries_come_from_one_pass_and_match_the_model(
    embedder: SentenceTransformerEmbedder,
) -> None:
    counting = CountingEmbedder(embedder)
    queries = PrecomputedQueries(counting, [*QUERIES, QUERIES[0]])
    assert counting.query_texts == len(QUERIES)  # duplicates embedded once
    for _ in range(3):
        got = queries.embed_queries([QUERIES[2], QUERIES[0]])
        alone = np.concatenate(
            [embedder.embed_queries([QUERIES[2]]), embedder.embed_queries([QUERIES[0]])]
        )
        np.testing.assert_allclose(got, alone, atol=1e-5)
    assert counting.query_texts == len(QUERIES)
    assert queries.model_name == embedder.model_name and queries.dimension == embedder.dimension


def test_unknown_queries_go_to_the_model_once(embedder: SentenceTransformerEmbedder) -> None:
    counting = CountingEmbedder(embedder)
    queries = PrecomputedQueries(counting, QUERIES[:1])
    other = "What is a generator expression?"
    first = queries.embed_queries([other])
    second = queries.embed_queries([other, QUERIES[0]])
    assert counting.query_texts == 2
    np.testing.assert_allclose(first[0], second[0])
    np.testing.assert_allclose(first, embedder.embed_queries([other]), atol=1e-5)
    assert queries.embed_queries([]).shape == (0, embedder.dimension)
