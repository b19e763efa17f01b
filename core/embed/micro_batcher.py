"""`MicroBatchingEmbedder`: gathers concurrent query embeddings into one forward pass.

Callers on many threads each enqueue their texts as one item and wait on a future. A single
daemon worker takes the oldest item, gathers more until `max_batch` texts are waiting or
`max_wait_ms` has passed, runs one `inner.embed_queries` over the concatenation and hands each
caller its own rows. The same path runs on CPU and GPU (the inner embedder owns the device and
precision). A full queue raises `Overloaded` with a retry estimate from recent batch latency.

`embed_queries_async` joins the same batches from an event loop: the caller awaits an asyncio
future completed from the batch thread (`asyncio.wrap_future`, i.e. `call_soon_threadsafe`), so
a query waiting for its embedding holds no worker thread; cancelling the await drops a queued
request and discards a running one's rows, the rest of its batch is unaffected.

`embed_queries_tensor` shares the same batches: when the inner embedder is a
`TensorQueryEmbedder` and a batch holds a tensor request, the forward pass result stays on the
device, tensor callers get their rows as device tensors and NumPy callers one host copy.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import numpy.typing as npt
from opentelemetry import trace
from opentelemetry.trace import Span

from core.embed.embedder_identity import EmbedderIdentity
from core.embed.protocol import Embedder, TensorQueryEmbedder
from core.embed.torch_tensors import is_tensor
from core.errors import DeadlineExceeded, Overloaded
from core.observe.attributes import BATCH_SIZE, DEVICE, QUEUE_WAIT_MS

if TYPE_CHECKING:  # torch is imported by the tensor path only (a GPU model's)
    import torch

logger = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float32]
Vectors: TypeAlias = "FloatArray | torch.Tensor"
MIN_RETRY_AFTER_S = 0.05
_LATENCY_SMOOTHING = 0.2  # weight of the newest batch in the latency moving average


@dataclass(frozen=True, slots=True)
class MicroBatcherStats:
    """Counters since construction: successful batches and the texts they embedded, failed
    batches, and texts waiting now."""

    batches: int
    texts: int
    failed_batches: int
    pending_texts: int
    batch_sizes: tuple[tuple[int, int], ...] = ()
    """(texts in a batch, successful batches of that size), by size."""
    busy_s: float = 0.0
    """Wall seconds spent in inner model calls (successful batches): per text, the model cost
    a query actually paid in its batch."""

    @property
    def mean_batch_size(self) -> float:
        """Texts per inner call (0.0 before the first batch)."""
        return self.texts / self.batches if self.batches else 0.0


@dataclass(slots=True, eq=False)
class _Item:
    texts: list[str]
    as_tensor: bool = False
    future: Future[Vectors] = field(default_factory=Future)
    enqueued: float = field(default_factory=time.monotonic)
    span: Span | None = None  # the caller's span, when it records: gets batch size and wait


DEFAULT_MAX_BATCH = 64
"""Most texts per inner call, by default (the server's `model.query_batch_max`)."""
DEFAULT_MAX_WAIT_MS = 1.0
"""How long a gathered batch waits for company, by default (the server's
`model.query_batch_wait_ms`; ghz A/B: benchmarks/results/ghz_query_batch_wait.md, where 2 ms
cost 20 % of RPS at 1 client)."""
DEFAULT_MAX_QUEUE = 1024
"""Most texts waiting before `Overloaded`, by default (the server's `model.query_queue_max`)."""


class MicroBatchingEmbedder(EmbedderIdentity):
    """An `Embedder` whose `embed_queries` is batched across threads; everything else delegates.

    `max_batch`: most texts per inner call (a single larger request is split into chunks);
    `max_wait_ms`: longest a gathered batch waits for company; `max_queue`: most texts waiting
    before new requests are refused with `Overloaded`.
    """

    def __init__(
        self,
        inner: Embedder,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_wait_ms: float = DEFAULT_MAX_WAIT_MS,
        max_queue: int = DEFAULT_MAX_QUEUE,
    ) -> None:
        if max_batch < 1 or max_queue < 1 or max_wait_ms < 0:
            raise ValueError(
                f"need max_batch >= 1, max_queue >= 1 and max_wait_ms >= 0, got "
                f"{max_batch}, {max_queue} and {max_wait_ms}"
            )
        self._inner = inner
        self._tensor_inner = inner if isinstance(inner, TensorQueryEmbedder) else None
        self._take_identity(inner)
        self._max_batch = max_batch
        self._max_wait_s = max_wait_ms / 1000.0
        self._max_queue = max_queue
        self._condition = threading.Condition()
        self._queue: deque[_Item] = deque()
        self._pending_texts = 0
        self._closed = False
        self._batches = 0
        self._texts = 0
        self._failed = 0
        self._sizes: dict[int, int] = {}
        self._busy_s = 0.0
        self._latency_s = 0.0
        self._worker = threading.Thread(target=self._run, name="query-micro-batcher", daemon=True)
        self._worker.start()

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        """Embeddings of passages, straight from the inner embedder (not batched here)."""
        return self._inner.embed_documents(texts)

    def count_tokens(self, text: str) -> int:
        """Token count from the inner embedder."""
        return self._inner.count_tokens(text)

    def embed_queries(self, texts: Sequence[str], timeout_s: float | None = None) -> FloatArray:
        """Embeddings of queries: float32 (len(texts), dimension), from a shared batch.

        Raises `Overloaded` when the queue is full, `DeadlineExceeded` when no result came within
        `timeout_s` (the request is dropped, others are unaffected), `RuntimeError` after
        `close()`, and whatever the inner embedder raised for this request's batch.
        """
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        result = self._submit(_Item(list(texts)), timeout_s)
        assert isinstance(result, np.ndarray)
        return result

    async def embed_queries_async(self, texts: Sequence[str]) -> FloatArray:
        """`embed_queries` for a coroutine: float32 (len(texts), dimension) from a shared batch,
        awaited without blocking the event loop or holding a thread.

        Raises as `embed_queries` does (`Overloaded` at once when the queue is full); the
        caller's deadline is its own (cancel the await; the request leaves the batch).
        """
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        item = _Item(list(texts))
        self._enqueue(item)
        result = await asyncio.wrap_future(item.future)
        assert isinstance(result, np.ndarray)
        return result

    def embed_queries_tensor(
        self, texts: Sequence[str], timeout_s: float | None = None
    ) -> torch.Tensor:
        """Query embeddings as a tensor (len(texts), dimension), L2-normalised, from a shared batch.

        On the inner model's device and dtype when it is a `TensorQueryEmbedder`, else a float32
        CPU tensor. Raises as `embed_queries` does.
        """
        import torch

        if not texts:
            return torch.empty((0, self.dimension), dtype=torch.float32)
        result = self._submit(_Item(list(texts), as_tensor=True), timeout_s)
        assert isinstance(result, torch.Tensor)
        return result

    def _submit(self, item: _Item, timeout_s: float | None) -> Vectors:
        self._enqueue(item)
        try:
            return item.future.result(timeout=timeout_s)
        except FutureTimeout:
            item.future.cancel()  # still queued: the worker skips it; running: result discarded
            raise DeadlineExceeded(f"query embedding did not finish within {timeout_s} s") from None

    def _enqueue(self, item: _Item) -> None:
        with self._condition:
            if self._closed:
                raise RuntimeError("the query micro-batcher is closed")
            pending = self._pending_texts
            if pending and pending + len(item.texts) > self._max_queue:
                raise Overloaded(
                    f"query embedding queue is full ({pending} pending); retry shortly",
                    retry_after_s=self._retry_after_s(pending),
                )
            caller = trace.get_current_span()
            item.span = caller if caller.is_recording() else None
            self._queue.append(item)
            self._pending_texts += len(item.texts)
            self._condition.notify()

    def stats(self) -> MicroBatcherStats:
        """A snapshot of the counters."""
        with self._condition:
            return MicroBatcherStats(
                self._batches,
                self._texts,
                self._failed,
                self._pending_texts,
                tuple(sorted(self._sizes.items())),
                self._busy_s,
            )

    def close(self, timeout_s: float | None = 10.0) -> None:
        """Stop the worker after its current batch; queued requests fail. Idempotent."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()
        if threading.current_thread() is not self._worker:
            self._worker.join(timeout_s)

    def _retry_after_s(self, pending: int) -> float:
        batches_ahead = math.ceil(pending / self._max_batch)
        return max(MIN_RETRY_AFTER_S, self._latency_s * batches_ahead)

    def _run(self) -> None:
        while True:
            batch = self._gather()
            if batch is None:
                return
            if batch:
                self._execute(batch)

    def _gather(self) -> list[_Item] | None:
        """The next batch (possibly empty when every item was cancelled); None once closed."""
        with self._condition:
            while not self._queue and not self._closed:
                self._condition.wait()
            if self._closed:
                self._fail_queued()
                return None
            batch: list[_Item] = []
            size = 0
            deadline = time.monotonic() + self._max_wait_s
            while size < self._max_batch and not self._closed:
                if self._queue:
                    head = self._queue[0]
                    if batch and size + len(head.texts) > self._max_batch:
                        break
                    self._queue.popleft()
                    self._pending_texts -= len(head.texts)
                    if head.future.set_running_or_notify_cancel():
                        batch.append(head)
                        size += len(head.texts)
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._condition.wait(remaining)
            return batch

    def _fail_queued(self) -> None:
        while self._queue:
            item = self._queue.popleft()
            self._pending_texts -= len(item.texts)
            if item.future.set_running_or_notify_cancel():
                item.future.set_exception(RuntimeError("the query micro-batcher is closed"))

    def _execute(self, batch: list[_Item]) -> None:
        texts = [text for item in batch for text in item.texts]
        on_device = self._tensor_inner is not None and any(item.as_tensor for item in batch)
        started = time.monotonic()
        for item in batch:
            if item.span is not None:
                wait_ms = (started - item.enqueued) * 1000.0
                item.span.set_attributes(
                    {BATCH_SIZE: len(texts), QUEUE_WAIT_MS: wait_ms, DEVICE: str(self.device)}
                )
        try:
            vectors = self._embed_tensor(texts) if on_device else self._embed_chunked(texts)
        except Exception as exc:  # the batch's callers get the error; the worker carries on
            logger.warning("query embedding batch of %d texts failed: %s", len(texts), exc)
            self._record(len(texts), time.monotonic() - started, failed=True)
            for item in batch:
                item.future.set_exception(exc)
            return
        self._record(len(texts), time.monotonic() - started, failed=False)
        host: FloatArray | None = vectors if isinstance(vectors, np.ndarray) else None
        if host is None and not all(item.as_tensor for item in batch):
            assert is_tensor(vectors)
            host = vectors.float().cpu().numpy()  # one device-to-host copy for the whole batch
        offset = 0
        for item in batch:
            rows = slice(offset, offset + len(item.texts))
            if not item.as_tensor:
                assert host is not None
                item.future.set_result(host[rows])
            else:
                item.future.set_result(_tensor_rows(vectors, rows))
            offset += len(item.texts)

    def _embed_chunked(self, texts: list[str]) -> FloatArray:
        chunks = [
            self._inner.embed_queries(texts[start : start + self._max_batch])
            for start in range(0, len(texts), self._max_batch)
        ]
        vectors = np.asarray(chunks[0] if len(chunks) == 1 else np.concatenate(chunks))
        expected = (len(texts), self.dimension)
        if vectors.shape != expected:
            raise RuntimeError(
                f"inner embedder returned shape {vectors.shape}, expected {expected}"
            )
        return vectors.astype(np.float32, copy=False)

    def _embed_tensor(self, texts: list[str]) -> torch.Tensor:
        import torch

        inner = self._tensor_inner
        assert inner is not None
        chunks = [
            inner.embed_queries_tensor(texts[start : start + self._max_batch])
            for start in range(0, len(texts), self._max_batch)
        ]
        vectors = chunks[0] if len(chunks) == 1 else torch.cat(chunks)
        expected = (len(texts), self.dimension)
        if tuple(vectors.shape) != expected:
            raise RuntimeError(
                f"inner embedder returned shape {tuple(vectors.shape)}, expected {expected}"
            )
        return vectors

    def _record(self, texts: int, elapsed_s: float, *, failed: bool) -> None:
        with self._condition:
            if failed:
                self._failed += 1
            else:
                self._batches += 1
                self._texts += texts
                self._sizes[texts] = self._sizes.get(texts, 0) + 1
                self._busy_s += elapsed_s
            if self._batches + self._failed == 1:
                self._latency_s = elapsed_s
            else:
                self._latency_s += _LATENCY_SMOOTHING * (elapsed_s - self._latency_s)


def _tensor_rows(vectors: Vectors, rows: slice) -> torch.Tensor:
    """`rows` of a batch's vectors as a tensor (host rows wrapped without a copy); only a
    tensor request asks, and it imported torch."""
    if is_tensor(vectors):
        return vectors[rows]
    import torch

    return torch.from_numpy(vectors[rows])
