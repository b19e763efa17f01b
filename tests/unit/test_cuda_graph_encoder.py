"""`CudaGraphQueryEncoder` on CPU: the bucketed static-shape forward (graphs off) against
sentence-transformers' own `encode_query`, bucket selection, and the models it refuses.

The graph replay itself is in tests/gpu/test_cuda_graph_encoder_cuda.py (skipped without CUDA).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import SimpleNamespace

import pytest
import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Dense, Pooling

from core.embed.cuda_graph_encoder import (
    CudaGraphQueryEncoder,
    QueryTokenizer,
    is_mean_pooling,
    pick_bucket,
    query_prompt,
    sequence_buckets,
)
from core.embed.sentence_transformer_embedder import default_model_path

SHORT = "pickle"
MEDIUM = (
    "How do I copy a file in Python while keeping its permissions, timestamps and other "
    "metadata intact on both Linux and Windows?"
)
LONG = " ".join(f"word{i}" for i in range(300))  # far past 256 tokens: truncated
TEXTS = [SHORT, MEDIUM, LONG]
TOLERANCE = 1e-5  # fp32


@pytest.fixture(scope="module")
def model() -> SentenceTransformer:
    """The bundled all-MiniLM-L6-v2 on CPU in fp32, as the embedder runs it (Transformer -> mean
    Pooling -> Normalize)."""
    loaded = SentenceTransformer(default_model_path(), device="cpu", local_files_only=True)
    return loaded.float()  # a checkpoint saved in fp16 loads as fp16


@pytest.fixture(scope="module")
def encoder(model: SentenceTransformer) -> CudaGraphQueryEncoder:
    built = CudaGraphQueryEncoder.for_model(model)
    assert built is not None
    return built


def reference(model: SentenceTransformer, texts: list[str]) -> torch.Tensor:
    """What the embedder's eager path computes."""
    vectors = model.encode_query(texts, normalize_embeddings=True, convert_to_tensor=True)
    assert isinstance(vectors, torch.Tensor)
    return vectors


def rebuilt(
    model: SentenceTransformer, *modules: torch.nn.Module, **kwargs: object
) -> SentenceTransformer:
    """A SentenceTransformer over the loaded Transformer module and `modules`."""
    return SentenceTransformer(modules=[model[0], *modules], device="cpu", **kwargs)


@pytest.mark.parametrize(
    ("size", "expected"),
    [(0, 1), (1, 1), (3, 4), (33, 64), (64, 64), (65, None)],
    ids=["zero", "one", "three-pads-to-four", "33-pads-to-64", "64", "65-fits-none"],
)
def test_pick_bucket(size: int, expected: int | None) -> None:
    assert pick_bucket(size, (1, 2, 4, 8, 16, 32, 64)) == expected


@pytest.mark.parametrize(
    ("buckets", "max_length", "expected"),
    [
        ((16, 32, 64, 128, 256), 256, (16, 32, 64, 128, 256)),
        ((256, 16, 512, 64), 256, (16, 64, 256)),
        ((16, 300), 128, (16, 128)),
    ],
    ids=["minilm", "capped-and-sorted", "all-capped-to-the-model"],
)
def test_sequence_buckets_are_capped_at_the_model_length(
    buckets: tuple[int, ...], max_length: int, expected: tuple[int, ...]
) -> None:
    assert sequence_buckets(buckets, max_length) == expected


@pytest.mark.parametrize(
    ("pooling", "expected"),
    [
        (SimpleNamespace(pooling_mode="mean"), True),
        (SimpleNamespace(pooling_mode=("mean",)), True),
        (SimpleNamespace(pooling_mode="cls"), False),
        (SimpleNamespace(pooling_mode=("mean", "max")), False),
        (SimpleNamespace(pooling_mode_mean_tokens=True, pooling_mode_cls_token=False), True),
        (SimpleNamespace(pooling_mode_mean_tokens=True, pooling_mode_max_tokens=True), False),
        (SimpleNamespace(pooling_mode_cls_token=True), False),
        (SimpleNamespace(), False),
    ],
    ids=[
        "mean",
        "mean-tuple",
        "cls",
        "mean-and-max",
        "legacy-mean",
        "legacy-mean-max",
        "legacy-cls",
        "unknown",
    ],
)
def test_is_mean_pooling(pooling: object, expected: bool) -> None:
    assert is_mean_pooling(pooling) is expected


@pytest.mark.parametrize(
    ("prompts", "default_name", "expected"),
    [
        ({"query": "", "document": ""}, None, ""),
        ({"query": "query: ", "document": "passage: "}, None, "query: "),
        ({"instruct": "Represent this: "}, "instruct", "Represent this: "),
        ({"query": "", "instruct": "Represent this: "}, "instruct", ""),
        ({}, None, ""),
    ],
    ids=["none", "query-prompt", "default-prompt", "query-beats-default", "no-prompts"],
)
def test_query_prompt_follows_encode_query(
    prompts: dict[str, str], default_name: str | None, expected: str
) -> None:
    model = SimpleNamespace(prompts=prompts, default_prompt_name=default_name)
    assert query_prompt(model) == expected


def test_cpu_encoder_runs_eagerly(encoder: CudaGraphQueryEncoder) -> None:
    assert not encoder.graphs_active
    encoder.warm_up()
    assert encoder.captured_buckets() == []


@pytest.mark.parametrize("count", [1, 3, 64], ids=["one", "three-padded-to-four", "sixty-four"])
def test_bucketed_forward_matches_encode_query(
    model: SentenceTransformer, encoder: CudaGraphQueryEncoder, count: int
) -> None:
    texts = [TEXTS[i % len(TEXTS)] + f" {i}" for i in range(count)]
    vectors = encoder.encode(texts)
    assert vectors is not None
    assert vectors.dtype == torch.float32 and vectors.device.type == "cpu"
    assert tuple(vectors.shape) == (count, 384)
    torch.testing.assert_close(vectors, reference(model, texts), atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize("text", TEXTS, ids=["one-word", "twenty-words", "truncated"])
def test_each_length_alone_matches_encode_query(
    model: SentenceTransformer, encoder: CudaGraphQueryEncoder, text: str
) -> None:
    vectors = encoder.encode([text])
    assert vectors is not None
    torch.testing.assert_close(vectors, reference(model, [text]), atol=TOLERANCE, rtol=0)


def test_batches_beyond_the_largest_bucket_are_left_to_the_caller(
    encoder: CudaGraphQueryEncoder,
) -> None:
    assert encoder.encode([SHORT] * 65) is None
    assert encoder.encode([]) is None


def test_texts_longer_than_every_sequence_bucket_are_left_to_the_caller(
    model: SentenceTransformer,
) -> None:
    short_buckets = CudaGraphQueryEncoder.for_model(model, seq_buckets=(16,))
    assert short_buckets is not None
    assert short_buckets.encode([MEDIUM]) is None
    assert short_buckets.encode([SHORT]) is not None


def test_tokenizer_rows_match_the_tokenizer_call(model: SentenceTransformer) -> None:
    tokenizer = QueryTokenizer(model.tokenizer, 256, "")
    assert tokenizer.uses_backend
    rows = tokenizer(TEXTS)
    expected = model.tokenizer(TEXTS, truncation="longest_first", max_length=256)
    assert [ids for ids, _ in rows] == expected["input_ids"]
    assert [types for _, types in rows] == expected["token_type_ids"]
    assert len(rows[2][0]) == 256 and rows[2][0][-1] == model.tokenizer.sep_token_id


def test_a_query_prompt_is_prepended_like_encode_query(model: SentenceTransformer) -> None:
    prompted = rebuilt(model, model[1], model[2], prompts={"query": "query: "})
    encoder = CudaGraphQueryEncoder.for_model(prompted)
    assert encoder is not None
    vectors = encoder.encode(TEXTS)
    assert vectors is not None
    torch.testing.assert_close(vectors, reference(prompted, TEXTS), atol=TOLERANCE, rtol=0)
    assert not torch.allclose(vectors, reference(model, TEXTS), atol=1e-3)


def test_a_model_without_normalize_is_still_normalised(model: SentenceTransformer) -> None:
    unnormalised = rebuilt(model, model[1])
    encoder = CudaGraphQueryEncoder.for_model(unnormalised)
    assert encoder is not None
    vectors = encoder.encode(TEXTS)
    assert vectors is not None
    torch.testing.assert_close(vectors, reference(model, TEXTS), atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize(
    ("modules", "kwargs", "reason"),
    [
        (
            lambda: [Pooling(384, pooling_mode="cls")],
            {},
            "pooling 'cls' is not mean pooling",
        ),
        (
            lambda: [Pooling(384), Dense(384, 128)],
            {},
            "modules ['Transformer', 'Pooling', 'Dense'] are not Transformer, mean Pooling "
            "and an optional Normalize",
        ),
        (
            lambda: [Pooling(384, include_prompt=False)],
            {"prompts": {"query": "query: "}},
            "the query prompt is excluded from pooling",
        ),
        (lambda: [Pooling(384)], {"truncate_dim": 128}, "truncate_dim is set"),
    ],
    ids=["cls-pooling", "dense-layer", "prompt-excluded-from-pooling", "truncate-dim"],
)
def test_other_models_get_no_encoder(
    model: SentenceTransformer,
    caplog: pytest.LogCaptureFixture,
    modules: Callable[[], list[torch.nn.Module]],
    kwargs: dict[str, object],
    reason: str,
) -> None:
    other = rebuilt(model, *modules(), **kwargs)
    with caplog.at_level(logging.INFO, logger="core.embed.cuda_graph_encoder"):
        assert CudaGraphQueryEncoder.for_model(other) is None
    assert caplog.messages == [f"query embedding stays on the sentence-transformers path: {reason}"]


def test_graphs_need_a_cuda_device(model: SentenceTransformer) -> None:
    with pytest.raises(ValueError) as error:
        CudaGraphQueryEncoder.for_model(model, use_graphs=True)
    assert str(error.value) == "CUDA graphs need a CUDA device, the model is on cpu"
