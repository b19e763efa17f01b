"""Tests of `SentenceTransformerEmbedder` against the real bundled all-MiniLM-L6-v2 model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from core.embed.protocol import Embedder
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)

EmbedFn = Callable[[SentenceTransformerEmbedder, Sequence[str]], npt.NDArray[np.float32]]

PASSAGES = [
    "Use the pdb module to set breakpoints and step through Python code.",
    "A list comprehension builds a new list from an iterable in one expression.",
    "The Eiffel Tower is a wrought-iron lattice tower in Paris.",
]

EMBED_FUNCTIONS = [
    pytest.param(SentenceTransformerEmbedder.embed_documents, id="documents"),
    pytest.param(SentenceTransformerEmbedder.embed_queries, id="queries"),
]


def test_default_model_path_is_a_local_directory() -> None:
    assert (Path(default_model_path()) / "config.json").is_file()


def test_attributes_describe_the_model(embedder: SentenceTransformerEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.model_name == default_model_path()
    assert embedder.dimension == 384
    assert embedder.max_tokens == 254  # max sequence length 256 less [CLS] and [SEP]
    assert embedder.device == "cpu"


@pytest.mark.parametrize("embed", EMBED_FUNCTIONS)
def test_embeddings_are_normalised_float32_rows(
    embed: EmbedFn, embedder: SentenceTransformerEmbedder
) -> None:
    vectors = embed(embedder, PASSAGES)

    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("embed", EMBED_FUNCTIONS)
def test_empty_input_gives_an_empty_matrix(
    embed: EmbedFn, embedder: SentenceTransformerEmbedder
) -> None:
    vectors = embed(embedder, [])

    assert vectors.dtype == np.float32
    assert vectors.shape == (0, 384)


def test_a_paraphrase_is_closer_than_an_unrelated_passage(
    embedder: SentenceTransformerEmbedder,
) -> None:
    query = embedder.embed_queries(["How do I debug my Python program with breakpoints?"])[0]
    passages = embedder.embed_documents(PASSAGES)

    similarities = passages @ query

    assert int(np.argmax(similarities)) == 0
    assert similarities[0] > similarities[2] + 0.3


def test_embedding_is_independent_of_the_batch(embedder: SentenceTransformerEmbedder) -> None:
    together = embedder.embed_documents(PASSAGES)
    alone = np.vstack([embedder.embed_documents([text]) for text in PASSAGES])

    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_concurrent_calls_match_serial_calls(embedder: SentenceTransformerEmbedder) -> None:
    expected = embedder.embed_documents(PASSAGES)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: embedder.embed_documents(PASSAGES), range(8)))
        counts = list(pool.map(embedder.count_tokens, PASSAGES * 4))

    for result in results:
        np.testing.assert_allclose(result, expected, atol=1e-5)
    assert counts == [embedder.count_tokens(text) for text in PASSAGES * 4]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", 0, id="empty"),
        pytest.param("hello world", 2, id="two-words"),
        pytest.param("Hello, world!", 4, id="punctuation-splits"),
        pytest.param("tokenization", 2, id="wordpiece"),
    ],
)
def test_count_tokens_excludes_special_tokens(
    text: str, expected: int, embedder: SentenceTransformerEmbedder
) -> None:
    assert embedder.count_tokens(text) == expected


def test_count_tokens_is_not_capped_at_the_model_length(
    embedder: SentenceTransformerEmbedder,
) -> None:
    assert embedder.count_tokens("word " * 600) == 600


def test_count_tokens_batch_matches_single_counts(embedder: SentenceTransformerEmbedder) -> None:
    texts = [*PASSAGES, "", "def f():\n    return 1"]

    assert embedder.count_tokens_batch(texts) == [embedder.count_tokens(text) for text in texts]
    assert embedder.count_tokens_batch([]) == []


def test_token_counts_are_remembered_and_bounded(
    embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.embed import sentence_transformer_embedder as module

    monkeypatch.setattr(module, "TOKEN_COUNT_CACHE_SIZE", 3)
    calls: list[list[str]] = []
    tokenizer = embedder._tokenizer

    def counting(texts: list[str], **kwargs: object) -> object:
        calls.append(list(texts))
        return tokenizer(texts, **kwargs)

    monkeypatch.setattr(embedder, "_tokenizer", counting)
    embedder._token_counts.clear()
    texts = ["alpha beta", "gamma", "alpha beta", "delta epsilon"]
    first = embedder.count_tokens_batch(texts)
    fresh = tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]
    assert first == [len(ids) for ids in fresh]
    assert calls == [["alpha beta", "gamma", "delta epsilon"]]  # each distinct text once
    assert embedder.count_tokens("gamma") == first[1] and len(calls) == 1  # remembered
    embedder.count_tokens_batch(["zeta", "eta"])  # two more: the oldest entries go
    assert len(embedder._token_counts) == 3
    embedder.count_tokens("alpha beta")
    assert calls[-1] == ["alpha beta"]  # evicted, so counted again
