"""`MicroBatchingEmbedder.embed_queries_async`: callers awaiting on one event loop share batches.

The gated fake of test_micro_batcher decides which requests share a batch (no timing); the real
model checks that batched rows are the unbatched ones.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from core.embed.micro_batcher import MicroBatchingEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.errors import Overloaded
from tests.unit.test_micro_batcher import PATIENCE_S, FakeEmbedder, fake_vector, start_blocking


@pytest.fixture
def gated() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def batched(gated: FakeEmbedder) -> Iterator[MicroBatchingEmbedder]:
    instance = MicroBatchingEmbedder(gated, max_batch=8, max_wait_ms=2.0, max_queue=16)
    yield instance
    gated.gate.set()
    instance.close()


async def until(condition_reached: object) -> None:
    """Yield to the loop until `condition_reached()` holds (bounded by PATIENCE_S)."""
    assert callable(condition_reached)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE_S
    while not condition_reached():
        assert loop.time() < deadline, "condition not reached"
        await asyncio.sleep(0.001)


def queue(batcher: MicroBatchingEmbedder, texts: Sequence[str]) -> list[asyncio.Task[np.ndarray]]:
    """One awaiting task per text (each embeds one query)."""
    return [asyncio.create_task(batcher.embed_queries_async([text])) for text in texts]


def test_awaiting_callers_share_one_batch_and_get_their_own_rows(
    batched: MicroBatchingEmbedder, gated: FakeEmbedder
) -> None:
    texts = [f"question {i}" for i in range(6)]
    blocker = start_blocking(batched, gated)

    async def scenario() -> list[np.ndarray]:
        tasks = queue(batched, texts)
        await until(lambda: batched.stats().pending_texts == len(texts))
        gated.gate.set()
        return await asyncio.gather(*tasks)

    threads_before = threading.active_count()
    results = asyncio.run(scenario())
    blocker.join(PATIENCE_S)
    assert threading.active_count() <= threads_before  # six waiters, no thread each
    assert gated.batches == [["warm-up"], texts]
    for text, result in zip(texts, results, strict=True):
        np.testing.assert_array_equal(result, [fake_vector(text)])


def test_cancelled_waiter_leaves_the_batch_to_the_others(
    batched: MicroBatchingEmbedder, gated: FakeEmbedder
) -> None:
    blocker = start_blocking(batched, gated)

    async def scenario() -> list[object]:
        tasks = queue(batched, ["kept", "cancelled", "also kept"])
        await until(lambda: batched.stats().pending_texts == 3)
        tasks[1].cancel()
        gated.gate.set()
        return await asyncio.gather(*tasks, return_exceptions=True)

    kept, cancelled, also_kept = asyncio.run(scenario())
    blocker.join(PATIENCE_S)
    assert isinstance(cancelled, asyncio.CancelledError)
    assert gated.batches == [["warm-up"], ["kept", "also kept"]]  # skipped, not embedded
    np.testing.assert_array_equal(kept, [fake_vector("kept")])
    np.testing.assert_array_equal(also_kept, [fake_vector("also kept")])
    assert batched.stats().pending_texts == 0


def test_waiter_cancelled_while_its_batch_runs_does_not_break_it(
    batched: MicroBatchingEmbedder, gated: FakeEmbedder
) -> None:
    gated.gate.clear()

    async def scenario() -> list[object]:
        tasks = queue(batched, ["first", "second"])
        await until(gated.entered.is_set)
        tasks[0].cancel()  # its batch is inside the model: its row is discarded
        await asyncio.sleep(0)
        gated.gate.set()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        outcomes.append(await batched.embed_queries_async(["after"]))
        return outcomes

    first, second, after = asyncio.run(scenario())
    assert gated.batches[0][0] == "first"
    assert isinstance(first, asyncio.CancelledError)
    np.testing.assert_array_equal(second, [fake_vector("second")])
    np.testing.assert_array_equal(after, [fake_vector("after")])
    assert batched.stats().failed_batches == 0


def test_failing_batch_raises_in_every_waiter_and_the_worker_carries_on(
    batched: MicroBatchingEmbedder, gated: FakeEmbedder
) -> None:
    blocker = start_blocking(batched, gated)

    async def scenario() -> tuple[list[object], np.ndarray]:
        tasks = queue(batched, ["x", "poison", "y"])
        await until(lambda: batched.stats().pending_texts == 3)
        gated.gate.set()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        return outcomes, await batched.embed_queries_async(["later"])

    outcomes, later = asyncio.run(scenario())
    blocker.join(PATIENCE_S)
    assert gated.batches[1] == ["x", "poison", "y"]
    assert [str(o) for o in outcomes] == ["boom", "boom", "boom"]
    assert all(isinstance(o, RuntimeError) for o in outcomes)
    np.testing.assert_array_equal(later, [fake_vector("later")])
    assert batched.stats().failed_batches == 1


def test_full_queue_refuses_an_awaiting_caller_at_once(gated: FakeEmbedder) -> None:
    batcher = MicroBatchingEmbedder(gated, max_batch=2, max_wait_ms=2.0, max_queue=2)
    blocker = start_blocking(batcher, gated)

    async def scenario() -> str:
        tasks = queue(batcher, ["a", "b"])
        await until(lambda: batcher.stats().pending_texts == 2)
        with pytest.raises(Overloaded) as refused:
            await batcher.embed_queries_async(["c"])
        gated.gate.set()
        await asyncio.gather(*tasks)
        return str(refused.value)

    try:
        assert asyncio.run(scenario()) == "query embedding queue is full (2 pending); retry shortly"
    finally:
        gated.gate.set()
        blocker.join(PATIENCE_S)
        batcher.close()


def test_real_model_awaited_batches_match_unbatched_rows(
    embedder: SentenceTransformerEmbedder,
) -> None:
    batcher = MicroBatchingEmbedder(embedder, max_batch=64, max_wait_ms=5.0)
    texts = [f"how do I tune setting number {i} of the server?" for i in range(24)]

    async def scenario() -> list[np.ndarray]:
        return await asyncio.gather(*queue(batcher, texts))

    try:
        results = asyncio.run(scenario())
    finally:
        batcher.close()
    assert batcher.stats().batches < len(texts)  # shared forward passes
    for text, result in zip(texts, results, strict=True):
        alone = embedder.embed_queries([text])
        assert result.shape == (1, embedder.dimension) and result.dtype == np.float32
        np.testing.assert_allclose(result, alone, atol=1e-5)
