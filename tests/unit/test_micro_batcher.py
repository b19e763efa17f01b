"""Tests of `MicroBatchingEmbedder` with a recording fake embedder and with the real model.

The fake can be held shut by a gate, so the tests decide which requests share a batch instead of
relying on timing; the only time limits are generous bounds that keep a broken build from hanging.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial

import numpy as np
import pytest

from core.embed.micro_batcher import MicroBatchingEmbedder
from core.embed.protocol import Embedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.errors import DeadlineExceeded, Overloaded

PATIENCE_S = 30.0  # generous bound for anything a thread must wait for


def fake_vector(text: str, dimension: int = 8) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    vector = np.random.default_rng(seed).standard_normal(dimension)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


class FakeEmbedder:
    """Deterministic vectors per text; records every batch; optionally waits on a gate."""

    model_name = "fake"
    additive_token_counts = True  # count_tokens splits on whitespace
    dimension = 8
    max_tokens = 128
    device = "cpu"

    def __init__(self, delay_s: float = 0.005) -> None:
        self.batches: list[list[str]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self._delay_s = delay_s

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        self.entered.set()
        assert self.gate.wait(PATIENCE_S)
        time.sleep(self._delay_s)
        if "poison" in texts:
            raise RuntimeError("boom")
        return np.stack([fake_vector(text) for text in texts])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([-fake_vector(text) for text in texts])

    def count_tokens(self, text: str) -> int:
        return len(text.split())


@pytest.fixture
def fake() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def batcher(fake: FakeEmbedder) -> Iterator[MicroBatchingEmbedder]:
    instance = MicroBatchingEmbedder(fake, max_batch=8, max_wait_ms=2.0, max_queue=16)
    yield instance
    fake.gate.set()
    instance.close()


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.001)


def run_concurrently(calls: list[Callable[[], object]]) -> list[object]:
    """Run each call on its own thread, released together; results or exceptions, in order."""
    results: list[object] = [None] * len(calls)
    barrier = threading.Barrier(len(calls))

    def worker(position: int) -> None:
        barrier.wait()
        try:
            results[position] = calls[position]()
        except Exception as exc:
            results[position] = exc

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(PATIENCE_S)
    return results


def start_blocking(batcher: MicroBatchingEmbedder, fake: FakeEmbedder) -> threading.Thread:
    """Hold the worker inside an inner call (gate shut) with a request for "warm-up"."""
    fake.gate.clear()
    thread = threading.Thread(target=batcher.embed_queries, args=(["warm-up"],))
    thread.start()
    assert fake.entered.wait(PATIENCE_S)
    return thread


def test_delegates_everything_but_query_batching(batcher: MicroBatchingEmbedder) -> None:
    assert isinstance(batcher, Embedder)
    delegated = (batcher.model_name, batcher.dimension, batcher.max_tokens, batcher.device)
    assert delegated == ("fake", 8, 128, "cpu")
    np.testing.assert_array_equal(batcher.embed_documents(["a"]), [-fake_vector("a")])
    assert batcher.count_tokens("two words") == 2
    assert batcher.embed_queries([]).shape == (0, 8)


def test_concurrent_requests_share_batches_and_get_their_own_rows(fake: FakeEmbedder) -> None:
    batcher = MicroBatchingEmbedder(fake, max_batch=64)
    texts = [[f"query {i}"] if i % 4 else [f"query {i}", f"extra {i}"] for i in range(32)]
    results = run_concurrently([partial(batcher.embed_queries, t) for t in texts])
    batcher.close()
    for request, result in zip(texts, results, strict=True):
        assert isinstance(result, np.ndarray) and result.dtype == np.float32
        np.testing.assert_array_equal(result, np.stack([fake_vector(t) for t in request]))
    assert len(fake.batches) < 32
    stats = batcher.stats()
    assert stats.batches == len(fake.batches) and stats.texts == 40 and stats.failed_batches == 0
    assert stats.mean_batch_size == pytest.approx(40 / stats.batches)


def test_max_batch_is_respected(fake: FakeEmbedder) -> None:
    batcher = MicroBatchingEmbedder(fake, max_batch=8, max_queue=1024)
    texts = [[f"q{i}"] * (1 + i % 3) for i in range(24)]
    results = run_concurrently([partial(batcher.embed_queries, t) for t in texts])
    for request, result in zip(texts, results, strict=True):
        np.testing.assert_array_equal(result, np.stack([fake_vector(t) for t in request]))
    large = [f"long {i}" for i in range(19)]  # one request above max_batch is split
    np.testing.assert_array_equal(
        batcher.embed_queries(large), np.stack([fake_vector(t) for t in large])
    )
    assert max(len(batch) for batch in fake.batches) <= 8
    assert sum(len(batch) for batch in fake.batches) == sum(map(len, texts)) + 19
    batcher.close()


def test_failing_batch_fails_only_its_requests(
    batcher: MicroBatchingEmbedder, fake: FakeEmbedder
) -> None:
    blocker = start_blocking(batcher, fake)
    results = run_concurrently_background(batcher, [["poison"], ["innocent"]])
    wait_until(lambda: batcher.stats().pending_texts == 2)
    fake.gate.set()
    blocker.join(PATIENCE_S)
    outcomes = results()
    assert fake.batches[1] == ["poison", "innocent"] or fake.batches[1] == ["innocent", "poison"]
    assert all(isinstance(o, RuntimeError) and str(o) == "boom" for o in outcomes)
    np.testing.assert_array_equal(batcher.embed_queries(["later"]), [fake_vector("later")])
    assert batcher.stats().failed_batches == 1


def run_concurrently_background(
    batcher: MicroBatchingEmbedder, requests: list[list[str]], timeout_s: float | None = None
) -> Callable[[], list[object]]:
    """Start the requests on threads now; the returned function joins them and gives outcomes."""
    outcomes: list[object] = [None] * len(requests)

    def call(position: int) -> None:
        try:
            outcomes[position] = batcher.embed_queries(requests[position], timeout_s=timeout_s)
        except Exception as exc:
            outcomes[position] = exc

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(requests))]
    for thread in threads:
        thread.start()

    def join() -> list[object]:
        for thread in threads:
            thread.join(PATIENCE_S)
        return outcomes

    return join


def test_full_queue_raises_overloaded(batcher: MicroBatchingEmbedder, fake: FakeEmbedder) -> None:
    blocker = start_blocking(batcher, fake)
    waiting = run_concurrently_background(batcher, [[f"w{i}" for i in range(16)]])
    wait_until(lambda: batcher.stats().pending_texts == 16)
    with pytest.raises(Overloaded) as raised:
        batcher.embed_queries(["one too many"])
    assert str(raised.value) == "query embedding queue is full (16 pending); retry shortly"
    assert raised.value.retry_after_s >= 0.05
    fake.gate.set()
    blocker.join(PATIENCE_S)
    assert isinstance(waiting()[0], np.ndarray)


def test_timed_out_caller_does_not_disturb_others(
    batcher: MicroBatchingEmbedder, fake: FakeEmbedder
) -> None:
    fake.gate.clear()
    running = run_concurrently_background(batcher, [["running"]], timeout_s=0.05)
    assert fake.entered.wait(PATIENCE_S)
    queued = run_concurrently_background(batcher, [["queued"]], timeout_s=0.05)
    patient = run_concurrently_background(batcher, [["patient"]])
    timed_out = running() + queued()
    assert all(isinstance(o, DeadlineExceeded) for o in timed_out)
    assert str(timed_out[0]) == "query embedding did not finish within 0.05 s"
    fake.gate.set()
    np.testing.assert_array_equal(patient()[0], [fake_vector("patient")])
    assert ["queued"] not in fake.batches and all("queued" not in b for b in fake.batches)


def test_close_is_idempotent_and_fails_queued_requests(
    batcher: MicroBatchingEmbedder, fake: FakeEmbedder
) -> None:
    blocker = start_blocking(batcher, fake)
    queued = run_concurrently_background(batcher, [["queued"]])
    wait_until(lambda: batcher.stats().pending_texts == 1)
    batcher.close(timeout_s=0)
    fake.gate.set()
    blocker.join(PATIENCE_S)
    batcher.close()
    outcome = queued()[0]
    assert isinstance(outcome, RuntimeError)
    assert str(outcome) == "the query micro-batcher is closed"
    with pytest.raises(RuntimeError, match="^the query micro-batcher is closed$"):
        batcher.embed_queries(["after close"])


def test_real_model_batches_32_threads(embedder: SentenceTransformerEmbedder) -> None:
    batcher = MicroBatchingEmbedder(embedder)
    texts = [f"how do I configure feature number {i} of the server?" for i in range(32)]
    results = run_concurrently([partial(batcher.embed_queries, [t]) for t in texts])
    batcher.close()
    assert batcher.stats().batches <= 8  # inner calls: far fewer forward passes than requests
    direct = embedder.embed_queries(texts)
    for row, result in zip(direct, results, strict=True):
        assert isinstance(result, np.ndarray) and result.shape == (1, embedder.dimension)
        assert np.allclose(result[0], row, atol=1e-5)
