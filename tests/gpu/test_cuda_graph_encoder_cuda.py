"""`CudaGraphQueryEncoder` replaying CUDA graphs (fp16) against sentence-transformers' eager
`encode_query` on the same device, and the embedder's query path through it. Skipped without a
CUDA device.

Tolerance: per row cosine >= 0.999 and every element within 2e-3 of the eager fp16 embedding
(both are fp16; they differ only by padding shapes and kernel choice).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer

from core.embed.cuda_graph_encoder import CudaGraphQueryEncoder
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
]

SHORT = "pickle"
MEDIUM = (
    "How do I copy a file in Python while keeping its permissions, timestamps and other "
    "metadata intact on both Linux and Windows?"
)
LONG = " ".join(f"word{i}" for i in range(300))  # truncated at 256 tokens
WARM_BATCHES = (1, 8, 64)
WARM_LENGTHS = (16, 32, 64)
MAX_ABS_DIFF = 2e-3
MIN_COSINE = 0.999


@pytest.fixture(scope="module")
def model() -> SentenceTransformer:
    """The bundled model on CUDA in fp16, as the embedder runs it."""
    loaded = SentenceTransformer(default_model_path(), device="cuda", local_files_only=True)
    return loaded.half()


@pytest.fixture(scope="module")
def encoder(model: SentenceTransformer) -> CudaGraphQueryEncoder:
    built = CudaGraphQueryEncoder.for_model(model)
    assert built is not None
    built.warm_up(WARM_BATCHES, WARM_LENGTHS)
    return built


def eager(model: SentenceTransformer, texts: list[str]) -> torch.Tensor:
    vectors = model.encode_query(texts, normalize_embeddings=True, convert_to_tensor=True)
    assert isinstance(vectors, torch.Tensor)
    return vectors


def assert_matches_eager(actual: torch.Tensor | None, expected: torch.Tensor) -> None:
    assert actual is not None
    assert actual.device.type == "cuda" and actual.dtype == torch.float16
    assert actual.shape == expected.shape
    actual32, expected32 = actual.float(), expected.float()
    cosine = torch.nn.functional.cosine_similarity(actual32, expected32, dim=1)
    assert float(cosine.min()) >= MIN_COSINE
    assert float((actual32 - expected32).abs().max()) <= MAX_ABS_DIFF


def mixed(count: int, salt: str = "") -> list[str]:
    lengths = [SHORT, MEDIUM, "How do I copy a file?", LONG]
    return [f"{lengths[i % len(lengths)]} {salt}{i}" for i in range(count)]


def test_warm_up_captures_the_requested_buckets(encoder: CudaGraphQueryEncoder) -> None:
    assert encoder.graphs_active
    wanted = {(batch, seq) for batch in WARM_BATCHES for seq in WARM_LENGTHS}
    assert wanted <= set(encoder.captured_buckets())


@pytest.mark.parametrize("count", [1, 5, 64], ids=["one", "five-padded-to-eight", "sixty-four"])
def test_replay_matches_eager_encode_query(
    model: SentenceTransformer, encoder: CudaGraphQueryEncoder, count: int
) -> None:
    texts = mixed(count)
    assert_matches_eager(encoder.encode(texts), eager(model, texts))
    assert encoder.graphs_active  # no capture failed on the way


@pytest.mark.parametrize("text", [SHORT, MEDIUM, LONG], ids=["one-word", "twenty-words", "long"])
def test_each_length_alone_matches_eager(
    model: SentenceTransformer, encoder: CudaGraphQueryEncoder, text: str
) -> None:
    assert_matches_eager(encoder.encode([text]), eager(model, [text]))
    assert encoder.graphs_active


def test_replays_of_one_bucket_see_new_inputs_and_return_their_own_rows(
    model: SentenceTransformer, encoder: CudaGraphQueryEncoder
) -> None:
    first_texts = ["How do I copy a file?", "What is a lambda?"]
    second_texts = ["Why is the GIL there?", "How do I sort a dict by value?"]
    first = encoder.encode(first_texts)
    second = encoder.encode(second_texts)
    assert (2, 16) in encoder.captured_buckets()
    assert_matches_eager(first, eager(model, first_texts))  # not overwritten by the replay
    assert_matches_eager(second, eager(model, second_texts))


def test_batches_beyond_the_largest_bucket_are_left_to_the_caller(
    encoder: CudaGraphQueryEncoder,
) -> None:
    assert encoder.encode(mixed(65)) is None


def test_embedder_embeds_queries_through_the_graphs() -> None:
    embedder = SentenceTransformerEmbedder(default_model_path(), "cuda")
    assert embedder.query_graphs == "cuda-graphs (0 captured)"
    embedder.warm_up_query_graphs((1,), (16,))
    assert embedder.query_graphs == "cuda-graphs (1 captured)"
    reference = SentenceTransformerEmbedder(default_model_path(), "cuda", cuda_graphs=False)
    assert reference.query_graphs == "off"
    query = ["How do I copy a file?"]
    host = embedder.embed_queries(query)
    assert host.dtype == np.float32 and host.shape == (1, embedder.dimension)
    np.testing.assert_allclose(host, reference.embed_queries(query), atol=MAX_ABS_DIFF)
    texts = mixed(5)
    assert_matches_eager(
        embedder.embed_queries_tensor(texts), reference.embed_queries_tensor(texts)
    )
    assert embedder.query_graphs.startswith("cuda-graphs (") and embedder.query_graphs != (
        "cuda-graphs (1 captured)"
    )
    documents = embedder.embed_documents(texts)  # documents stay on the eager path
    assert documents.shape == (5, embedder.dimension)
