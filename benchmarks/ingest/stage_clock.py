"""Time the stages of the real `core.indexer.Indexer` without changing it.

`StageClock.instrument(collection, embedder)` wraps, for the duration of a `with` block, the
functions the indexer calls for each stage:

- parse+chunk: `core.indexer.chunk_any` (format parsing, chunking, token counting, risk rules)
- embed: the embedder's `embed_documents`
- store commit: the collection store's `upsert_document` (one SQLite transaction per document)
- index update: the collection's `_mirror` and `_commit_indexes` (FAISS add, Tantivy add and
  commit, dense persistence)

Whatever the indexer does outside them (content hashes, unchanged checks) is "other".
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any, TypeVar
from unittest import mock

import numpy as np
import numpy.typing as npt

import core.indexer
from core.catalog.collection import Collection
from core.embed.delegating_embedder import DelegatingEmbedder
from core.embed.protocol import Embedder

STAGES = ("parse+chunk", "embed", "store commit", "index update")
F = TypeVar("F", bound=Callable[..., Any])


class TimedEmbedder(DelegatingEmbedder):
    """An Embedder that adds the time of `embed_documents` to a clock. Queries and token counts
    pass through untimed: ingestion embeds no queries, and chunking's token counts count towards
    "parse+chunk"."""

    def __init__(self, inner: Embedder, clock: StageClock) -> None:
        super().__init__(inner)
        self._clock = clock

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Timed as "embed"."""
        with self._clock.stage("embed"):
            return self._inner.embed_documents(texts)


class StageClock:
    """Seconds spent per stage, accumulated across calls."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Add the time of the block to `name`."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - started

    def timed(self, name: str, function: F) -> F:
        """`function`, with each call's time added to `name`."""

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.stage(name):
                return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    @contextmanager
    def instrument(self, collection: Collection) -> Iterator[None]:
        """Time the indexer's stages on `collection` (use a TimedEmbedder for "embed")."""
        with ExitStack() as stack:
            patches = [
                (core.indexer, "chunk_any", "parse+chunk"),
                (collection.store, "upsert_document", "store commit"),
                (collection, "_mirror", "index update"),
                (collection, "_commit_indexes", "index update"),
            ]
            for owner, attribute, stage in patches:
                original = getattr(owner, attribute)
                stack.enter_context(
                    mock.patch.object(owner, attribute, self.timed(stage, original))
                )
            yield
