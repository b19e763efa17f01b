"""`QueryEmbeddingCache` in front of the real MiniLM model, with a counting pass-through wrapper."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
import torch

from core.cache.lru_ttl import CacheStats
from core.cache.query_embedding_cache import QueryEmbeddingCache
from core.embed.delegating_embedder import DelegatingEmbedder
from core.embed.protocol import Embedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder


class CountingEmbedder(DelegatingEmbedder):
    """The real embedder, recording each `embed_queries` batch it passes on."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        super().__init__(inner)
        self.query_batches: list[list[str]] = []
        self.document_batches: list[list[str]] = []

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.query_batches.append(list(texts))
        return self.inner.embed_queries(texts)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.document_batches.append(list(texts))
        return self.inner.embed_documents(texts)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def counting(embedder: SentenceTransformerEmbedder) -> CountingEmbedder:
    return CountingEmbedder(embedder)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def cache(counting: CountingEmbedder, clock: FakeClock) -> QueryEmbeddingCache:
    return QueryEmbeddingCache(counting, ttl_s=30.0, max_entries=100, clock=clock)


def test_is_an_embedder_delegating_everything_but_query_caching(
    cache: QueryEmbeddingCache, counting: CountingEmbedder, embedder: SentenceTransformerEmbedder
) -> None:
    assert isinstance(cache, Embedder)
    assert (cache.model_name, cache.dimension, cache.max_tokens, cache.device) == (
        embedder.model_name,
        embedder.dimension,
        embedder.max_tokens,
        embedder.device,
    )
    assert cache.count_tokens("hello world") == embedder.count_tokens("hello world")
    twice = [cache.embed_documents(["a passage"]) for _ in range(2)]
    assert counting.document_batches == [["a passage"], ["a passage"]]
    np.testing.assert_array_equal(twice[0], embedder.embed_documents(["a passage"]))


def test_cached_vector_equals_a_fresh_embedding(
    cache: QueryEmbeddingCache, counting: CountingEmbedder, embedder: SentenceTransformerEmbedder
) -> None:
    first, first_hits = cache.embed_queries_with_hits(["how do I rotate api keys"])
    second, second_hits = cache.embed_queries_with_hits(["how do I rotate api keys"])
    assert (first_hits, second_hits) == ([False], [True])
    assert counting.query_batches == [["how do I rotate api keys"]]
    fresh = embedder.embed_queries(["how do I rotate api keys"])
    np.testing.assert_array_equal(second, fresh)
    assert second.dtype == np.float32 and second.shape == (1, embedder.dimension)


def test_whitespace_variants_share_one_entry_and_the_model_sees_the_normalised_text(
    cache: QueryEmbeddingCache, counting: CountingEmbedder, embedder: SentenceTransformerEmbedder
) -> None:
    vectors, hits = cache.embed_queries_with_hits(["  rotate\tapi  keys\n", "rotate api keys"])
    assert hits == [False, False]
    assert counting.query_batches == [["rotate api keys"]]
    np.testing.assert_array_equal(vectors[0], vectors[1])
    np.testing.assert_array_equal(vectors[:1], embedder.embed_queries(["rotate api keys"]))
    assert cache.embed_queries_with_hits(["rotate api keys "])[1] == [True]


def test_partial_batch_embeds_only_the_misses_in_one_call(
    cache: QueryEmbeddingCache, counting: CountingEmbedder, embedder: SentenceTransformerEmbedder
) -> None:
    cache.embed_queries(["alpha query", "gamma query"])
    counting.query_batches.clear()
    texts = ["alpha query", "beta query", "gamma query", "delta query", "beta query"]
    vectors, hits = cache.embed_queries_with_hits(texts)
    assert hits == [True, False, True, False, False]
    assert counting.query_batches == [["beta query", "delta query"]]
    np.testing.assert_allclose(vectors, embedder.embed_queries(texts), rtol=0, atol=1e-6)
    assert cache.stats() == CacheStats(hits=2, misses=5, evictions=0, expirations=0, entries=4)


def test_all_hits_make_no_inner_call(
    cache: QueryEmbeddingCache, counting: CountingEmbedder
) -> None:
    cache.embed_queries(["one", "two"])
    counting.query_batches.clear()
    assert cache.embed_queries_with_hits(["two", "one", "two"])[1] == [True, True, True]
    assert counting.query_batches == []


def test_mutating_a_result_cannot_corrupt_the_cache(
    cache: QueryEmbeddingCache, embedder: SentenceTransformerEmbedder
) -> None:
    first = cache.embed_queries(["stable vector"])
    first[:] = 0.0
    again = cache.embed_queries(["stable vector"])
    again[0, 0] = 42.0
    np.testing.assert_array_equal(
        cache.embed_queries(["stable vector"]), embedder.embed_queries(["stable vector"])
    )


def test_entries_expire_after_the_ttl(
    cache: QueryEmbeddingCache, counting: CountingEmbedder, clock: FakeClock
) -> None:
    cache.embed_queries(["expiring"])
    clock.now = 29.9
    assert cache.embed_queries_with_hits(["expiring"])[1] == [True]
    clock.now = 30.0
    assert cache.embed_queries_with_hits(["expiring"])[1] == [False]
    assert counting.query_batches == [["expiring"], ["expiring"]]
    assert cache.stats().expirations == 1


def test_max_entries_bounds_the_cache(counting: CountingEmbedder) -> None:
    small = QueryEmbeddingCache(counting, ttl_s=60.0, max_entries=2)
    small.embed_queries(["a", "b", "c"])
    assert small.stats().entries == 2
    assert small.embed_queries_with_hits(["a", "b", "c"])[1] == [False, True, True]


def test_clear_returns_entries_removed_and_resets_counters(
    cache: QueryEmbeddingCache, counting: CountingEmbedder
) -> None:
    cache.embed_queries(["x query", "y query"])
    cache.embed_queries(["x query"])
    assert cache.clear() == 2
    assert cache.stats() == CacheStats(hits=0, misses=0, evictions=0, expirations=0, entries=0)
    assert cache.embed_queries_with_hits(["x query"])[1] == [False]


def test_empty_batch(cache: QueryEmbeddingCache, counting: CountingEmbedder) -> None:
    vectors, hits = cache.embed_queries_with_hits([])
    assert vectors.shape == (0, cache.dimension) and hits == []
    assert counting.query_batches == []


def test_wrong_inner_shape_is_an_error_and_caches_nothing(counting: CountingEmbedder) -> None:
    class Truncating(CountingEmbedder):
        def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
            return super().embed_queries(texts)[:1]

    broken = QueryEmbeddingCache(Truncating(counting.inner))
    with pytest.raises(RuntimeError) as error:
        broken.embed_queries(["p", "q"])
    assert str(error.value) == "inner embedder returned shape (1, 384), expected (2, 384)"
    assert broken.stats().entries == 0


class CountingTensorEmbedder(CountingEmbedder):
    """Adds the tensor path, recording each `embed_queries_tensor` batch."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        super().__init__(inner)
        self.tensor_batches: list[list[str]] = []

    def embed_queries_tensor(self, texts: Sequence[str]) -> torch.Tensor:
        self.tensor_batches.append(list(texts))
        return self.inner.embed_queries_tensor(texts)


def test_tensor_path_embeds_misses_once_and_matches_the_array_path(
    embedder: SentenceTransformerEmbedder, clock: FakeClock
) -> None:
    inner = CountingTensorEmbedder(embedder)
    cache = QueryEmbeddingCache(inner, ttl_s=30.0, max_entries=100, clock=clock)
    texts = ["how do I sort a dict", "what is a generator", "how do I sort a dict"]

    first, hits = cache.embed_queries_tensor_with_hits(texts)
    assert hits == [False, False, False]
    assert inner.tensor_batches == [["how do I sort a dict", "what is a generator"]]
    assert tuple(first.shape) == (3, embedder.dimension)
    np.testing.assert_allclose(first.numpy(), embedder.embed_queries(texts), atol=1e-5)

    again, hits = cache.embed_queries_tensor_with_hits(texts[:2])
    assert hits == [True, True]
    assert len(inner.tensor_batches) == 1
    torch.testing.assert_close(again, first[:2])

    # rows cached on the device serve the array path too, and array-cached rows the tensor path
    arrays, hits = cache.embed_queries_with_hits(["what is a generator", "what is a lambda"])
    assert hits == [True, False]
    mixed, hits = cache.embed_queries_tensor_with_hits(["what is a lambda", "what is a generator"])
    assert hits == [True, True]
    np.testing.assert_allclose(mixed.numpy(), arrays[::-1], atol=1e-6)


def test_tensor_path_without_an_inner_tensor_embedder_uses_host_arrays(
    cache: QueryEmbeddingCache, counting: CountingEmbedder
) -> None:
    tensor, hits = cache.embed_queries_tensor_with_hits(["what is a decorator"])
    assert hits == [False]
    assert tensor.dtype == torch.float32 and tensor.device.type == "cpu"
    assert counting.query_batches == [["what is a decorator"]]


class AdaptedEmbedder(CountingEmbedder):
    """Another model: the real one followed by a fixed rotation (a tuned linear adapter)."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        super().__init__(inner)
        self.model_name = f"{inner.model_name}+adapter"
        rng = np.random.default_rng(3)
        self.rotation, _ = np.linalg.qr(rng.standard_normal((inner.dimension, inner.dimension)))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        vectors = super().embed_queries(texts) @ self.rotation
        return vectors.astype(np.float32)


def test_models_sharing_the_cache_never_get_each_others_vectors(
    counting: CountingEmbedder, embedder: SentenceTransformerEmbedder
) -> None:
    base = QueryEmbeddingCache(counting)
    adapted_model = AdaptedEmbedder(embedder)
    adapted = base.for_embedder(adapted_model)
    query = "How do I rotate the API keys?"

    served, _ = base.embed_queries_with_hits([query])
    tuned, tuned_hits = adapted.embed_queries_with_hits([query])
    assert tuned_hits == [False]  # the served model's vector is cached, but not this model's
    assert adapted_model.query_batches == [[query]]
    np.testing.assert_allclose(tuned, served @ adapted_model.rotation, atol=1e-5)
    assert float(tuned[0] @ served[0]) < 0.5

    assert adapted.embed_queries_with_hits([query])[1] == [True]
    again, hits = base.embed_queries_with_hits([query])
    assert hits == [True]
    np.testing.assert_array_equal(again, served)
    assert base.stats().entries == 2


def test_a_renamed_model_behind_the_same_cache_gets_new_keys(counting: CountingEmbedder) -> None:
    cache = QueryEmbeddingCache(counting)
    cache.embed_queries(["reload me"])
    counting.model_name = "reloaded-weights"  # the inner embedder now runs another model
    assert cache.embed_queries_with_hits(["reload me"])[1] == [False]
    assert counting.query_batches == [["reload me"], ["reload me"]]
