"""Query vectors as torch tensors: the embedder's precision and tensor path, the micro-batcher's
tensor requests sharing batches with NumPy ones, and tensor queries fed to the torch engine.

On CPU the model stays fp32 whatever `half_precision` says and query CUDA graphs are off; the fp16
CUDA path is in tests/gpu/.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import torch

from core.dense.torch_exact import TorchExactIndex
from core.embed.micro_batcher import MicroBatchingEmbedder
from core.embed.protocol import TensorQueryEmbedder
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)
from tests.unit.test_micro_batcher import PATIENCE_S, FakeEmbedder, fake_vector, wait_until


class FakeTensorEmbedder(FakeEmbedder):
    """The fake embedder with a tensor path; records which path each batch took."""

    def __init__(self) -> None:
        super().__init__()
        self.tensor_batches: list[list[str]] = []

    def embed_queries_tensor(self, texts: Sequence[str]) -> torch.Tensor:
        self.tensor_batches.append(list(texts))
        assert self.gate.wait(PATIENCE_S)
        return torch.from_numpy(np.stack([fake_vector(t) for t in texts])).to(torch.float64)


def test_cpu_embedder_is_fp32_and_its_tensors_match_numpy(
    embedder: SentenceTransformerEmbedder,
) -> None:
    assert embedder.precision == "fp32" and embedder.dtype == torch.float32
    assert isinstance(embedder, TensorQueryEmbedder)
    texts = ["How do I copy a file?", "Why are Python strings immutable?"]
    tensor = embedder.embed_queries_tensor(texts)
    assert tensor.device.type == "cpu" and tensor.dtype == torch.float32
    assert tuple(tensor.shape) == (2, embedder.dimension)
    torch.testing.assert_close(tensor.norm(dim=1), torch.ones(2), atol=1e-5, rtol=0)
    np.testing.assert_allclose(tensor.numpy(), embedder.embed_queries(texts), atol=1e-6)
    assert tuple(embedder.embed_queries_tensor([]).shape) == (0, embedder.dimension)


def test_half_precision_is_ignored_on_cpu() -> None:
    embedder = SentenceTransformerEmbedder(default_model_path(), "cpu", half_precision=True)
    assert embedder.precision == "fp32"
    assert embedder.embed_queries(["fp32 on cpu"]).dtype == np.float32


def test_cuda_graphs_are_off_on_cpu(embedder: SentenceTransformerEmbedder) -> None:
    assert embedder.query_graphs == "off"
    embedder.warm_up_query_graphs()  # a no-op without graph replay
    assert embedder.query_graphs == "off"


def test_tensor_and_numpy_requests_share_one_batch() -> None:
    fake = FakeTensorEmbedder()
    batcher = MicroBatchingEmbedder(fake, max_batch=64)
    fake.gate.clear()
    blocker = threading.Thread(target=batcher.embed_queries_tensor, args=(["warm-up"],))
    blocker.start()
    wait_until(lambda: bool(fake.tensor_batches))  # the worker is held inside the first batch
    results: list[object] = [None] * 8

    def call(i: int) -> None:
        embed = batcher.embed_queries_tensor if i % 2 else batcher.embed_queries
        results[i] = embed([f"q{i}"])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    wait_until(lambda: batcher.stats().pending_texts == 8)
    fake.gate.set()
    for thread in [blocker, *threads]:
        thread.join(PATIENCE_S)
    batcher.close()
    for i, result in enumerate(results):
        expected = fake_vector(f"q{i}")
        if i % 2:
            assert isinstance(result, torch.Tensor)
            np.testing.assert_allclose(result.numpy()[0], expected, atol=1e-7)
        else:
            assert isinstance(result, np.ndarray) and result.dtype == np.float32
            np.testing.assert_allclose(result[0], expected, atol=1e-7)
    assert fake.batches == []  # both batches held a tensor request: one device pass each
    assert [len(batch) for batch in fake.tensor_batches] == [1, 8]


def test_numpy_only_batches_keep_the_numpy_path() -> None:
    fake = FakeTensorEmbedder()
    batcher = MicroBatchingEmbedder(fake)
    np.testing.assert_array_equal(
        batcher.embed_queries(["only numpy"]), [fake_vector("only numpy")]
    )
    batcher.close()
    assert fake.batches == [["only numpy"]] and fake.tensor_batches == []


def test_inner_without_tensor_path_gives_cpu_tensors() -> None:
    fake = FakeEmbedder()
    batcher = MicroBatchingEmbedder(fake)
    result = batcher.embed_queries_tensor(["plain"])
    empty = batcher.embed_queries_tensor([])
    batcher.close()
    assert result.dtype == torch.float32 and result.device.type == "cpu"
    np.testing.assert_array_equal(result.numpy(), [fake_vector("plain")])
    assert tuple(empty.shape) == (0, 8)


def test_tensor_queries_search_like_numpy_queries(embedder: SentenceTransformerEmbedder) -> None:
    passages = [
        "Strings are immutable in Python for hashing and performance reasons.",
        "Use shutil.copy to copy a file.",
        "The GIL serialises bytecode execution.",
    ]
    index = TorchExactIndex.create(embedder.dimension)
    index.add(np.array([10, 20, 30], dtype=np.int64), embedder.embed_documents(passages))
    batcher = MicroBatchingEmbedder(embedder)
    query = ["How do I copy a file?"]
    from_tensor = index.search(batcher.embed_queries_tensor(query), 2)
    from_numpy = index.search(batcher.embed_queries(query), 2)
    batcher.close()
    np.testing.assert_array_equal(from_tensor[1], from_numpy[1])
    assert from_tensor[1][0, 0] == 20
    np.testing.assert_allclose(from_tensor[0], from_numpy[0], atol=1e-6)
