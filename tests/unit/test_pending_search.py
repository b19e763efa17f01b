"""core/retrieve/pending_search.py: a local search runs on the thread that reads it, once; a
remote one starts on the pool; and the pipeline picks by the collection's lexical index (a real
Tantivy index locally, Milvus Lite's BM25 on the milvus backend)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from core.catalog.catalog import DEFAULT_TENANT
from core.embed.protocol import Embedder
from core.models import Document, SourceType
from core.retrieve.modes import RetrievalMode
from core.retrieve.pending_search import RunWhenRead, start_search
from core.retrieve.request import RetrievalRequest
from tests.conftest import BACKENDS, backend_factory
from tests.unit.pipeline_support import indexed_pipeline


def test_run_when_read_runs_once_on_the_reading_thread() -> None:
    threads: list[str] = []

    def search() -> list[int]:
        threads.append(threading.current_thread().name)
        return [1, 2]

    pending = RunWhenRead(search)
    assert threads == []
    assert pending.result() == [1, 2]
    assert pending.result() == [1, 2]
    assert threads == [threading.current_thread().name]
    assert pending.cancel() is False


def test_run_when_read_cancelled_before_reading_never_runs() -> None:
    ran: list[bool] = []
    pending = RunWhenRead(lambda: ran.append(True))
    assert pending.cancel() is True
    with pytest.raises(RuntimeError, match="cancelled before it ran"):
        pending.result()
    assert ran == []


def test_run_when_read_raises_the_same_error_again() -> None:
    calls: list[int] = []

    def failing() -> None:
        calls.append(1)
        raise ValueError("index closed")

    pending = RunWhenRead(failing)
    for _ in range(2):
        with pytest.raises(ValueError, match="index closed"):
            pending.result()
    assert calls == [1]


def test_a_remote_search_starts_on_the_pool_at_once() -> None:
    started = threading.Event()

    def search() -> str:
        started.set()
        return threading.current_thread().name

    with ThreadPoolExecutor(1, thread_name_prefix="lexical-test") as pool:
        pending = start_search(search, remote=True, pool=pool)
        assert isinstance(pending, Future)
        assert started.wait(10)  # running before anyone reads it
        assert pending.result().startswith("lexical-test")
    local = start_search(search, remote=False, pool=pool)  # the pool is shut down: not used
    assert local.result() == threading.current_thread().name


class CountingPool(ThreadPoolExecutor):
    """A real pool that counts what it is given."""

    def __init__(self) -> None:
        super().__init__(2, thread_name_prefix="counted-lexical")
        self.submitted = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_pipeline_hands_only_remote_lexical_searches_to_its_pool(
    backend: str, request: pytest.FixtureRequest, embedder: Embedder, tmp_path: Path
) -> None:
    documents = [
        Document(
            "tea.md", "# Tea\n\nSteep green tea at 80 degrees for two minutes.", SourceType.MARKDOWN
        ),
        Document(
            "milk.md", "# Milk\n\nWarm the milk slowly and never let it boil.", SourceType.MARKDOWN
        ),
    ]
    pool = CountingPool()
    storage = backend_factory(backend, request)()
    with indexed_pipeline(embedder, tmp_path, "docs", documents, storage, pool) as pipeline:
        asked = RetrievalRequest(
            query="green tea temperature", collection="docs", tenant=DEFAULT_TENANT
        )
        result = pipeline.retrieve(asked)
        lexical_only = pipeline.retrieve(
            RetrievalRequest(
                query="green tea temperature",
                collection="docs",
                tenant=DEFAULT_TENANT,
                mode=RetrievalMode.LEXICAL,
            )
        )
        remote = pipeline._catalog.get(DEFAULT_TENANT, "docs").lexical_is_remote
    assert result.mode is RetrievalMode.HYBRID
    assert result.hits[0].chunk.document_id == "tea.md"
    assert lexical_only.hits[0].chunk.document_id == "tea.md"
    assert "lexical" in dict(result.timings)
    assert remote is (backend == "milvus")
    assert pool.submitted == (2 if remote else 0)
