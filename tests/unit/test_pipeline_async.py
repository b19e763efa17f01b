"""`RetrievalPipeline.retrieve_async`: the same results as `retrieve`, with the query embedding
awaited from a shared batch (real model, real indexes over the demo corpus)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.cache.query_embedding_cache import QueryEmbeddingCache
from core.catalog.catalog import DEFAULT_TENANT
from core.embed.micro_batcher import MicroBatchingEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.models import Document, SourceType
from core.retrieve.modes import RetrievalMode
from core.retrieve.pipeline import EMBEDDER_FAILED, RetrievalPipeline
from core.retrieve.request import RetrievalRequest, RetrievalResult
from tests.unit.pipeline_support import indexed_pipeline

DEMO = Path(__file__).resolve().parents[2] / "server" / "demo_corpus"
QUESTIONS = (
    "How do I make a Python script executable on Unix?",
    "Why are default values shared between objects?",
    "How can I find the methods or attributes of an object?",
    "Is there a tool to help find bugs or perform static analysis?",
    "How do I share global variables across modules?",
    "Why is Python installed on my machine?",
)


@pytest.fixture(scope="module")
def batched(embedder: SentenceTransformerEmbedder) -> Iterator[MicroBatchingEmbedder]:
    instance = MicroBatchingEmbedder(embedder, max_batch=64, max_wait_ms=5.0)
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def pipeline(
    batched: MicroBatchingEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RetrievalPipeline]:
    documents = [
        Document(f.stem, f.read_text("utf-8"), SourceType.MARKDOWN)
        for f in sorted(DEMO.glob("faq-*.md"))
    ]
    with indexed_pipeline(batched, tmp_path_factory.mktemp("data"), "faq", documents) as built:
        yield built


def request(query: str, mode: RetrievalMode) -> RetrievalRequest:
    return RetrievalRequest(query=query, collection="faq", tenant=DEFAULT_TENANT, mode=mode)


def offload_to(pool: ThreadPoolExecutor) -> Callable[..., Any]:
    def offload(fn: Callable[..., Any], *args: Any) -> Any:
        return asyncio.get_running_loop().run_in_executor(pool, fn, *args)

    return offload


def comparable(result: RetrievalResult) -> tuple[object, ...]:
    """Everything but timings (and scores rounded: a batch may change the last float bits)."""
    hits = tuple((h.chunk.row_id, h.rank, round(h.score, 4)) for h in result.hits)
    return hits, result.context.text, result.mode, result.warnings, result.keywords


def run_async(pipeline: RetrievalPipeline, requests: list[RetrievalRequest]) -> list[Any]:
    async def all_at_once() -> list[Any]:
        with ThreadPoolExecutor(4) as pool:
            offload = offload_to(pool)
            calls = (pipeline.retrieve_async(r, offload) for r in requests)
            return await asyncio.gather(*calls, return_exceptions=True)

    return asyncio.run(all_at_once())


@pytest.mark.parametrize("mode", list(RetrievalMode), ids=lambda m: m.name.lower())
def test_concurrent_awaited_retrievals_equal_one_at_a_time(
    pipeline: RetrievalPipeline, batched: MicroBatchingEmbedder, mode: RetrievalMode
) -> None:
    requests = [request(q, mode) for q in QUESTIONS]
    alone = [pipeline.retrieve(r) for r in requests]
    batches_before = batched.stats().batches
    together = run_async(pipeline, requests)
    assert [comparable(r) for r in together] == [comparable(r) for r in alone]
    assert all(r.hits for r in together)
    stages = [dict(r.timings) for r in together]
    if mode is RetrievalMode.LEXICAL:
        assert all("embed" not in s for s in stages)
    else:
        assert all({"preprocess", "embed", "fuse", "context"} <= set(s) for s in stages)
        assert batched.stats().batches - batches_before <= len(QUESTIONS)


def test_unknown_collection_raises_from_the_awaited_path(pipeline: RetrievalPipeline) -> None:
    missing = replace(request(QUESTIONS[0], RetrievalMode.HYBRID), collection="nope")
    (outcome,) = run_async(pipeline, [missing])
    assert type(outcome).__name__ == "NotFound"
    assert str(outcome).startswith("collection 'nope' does not exist")


def test_awaited_path_through_the_embedding_cache_reports_hits(
    pipeline: RetrievalPipeline, batched: MicroBatchingEmbedder
) -> None:
    cache = QueryEmbeddingCache(batched)
    cached = RetrievalPipeline(pipeline._catalog, cache, ThreadPoolExecutor(2))
    first = run_async(cached, [request(QUESTIONS[0], RetrievalMode.HYBRID)])[0]
    again = run_async(cached, [request(QUESTIONS[0], RetrievalMode.HYBRID)])[0]
    assert (first.embedding_cache_hit, again.embedding_cache_hit) == (False, True)
    assert comparable(first) == comparable(again)


def test_closed_batcher_falls_back_to_bm25_with_a_warning(
    embedder: SentenceTransformerEmbedder, pipeline: RetrievalPipeline
) -> None:
    closed = MicroBatchingEmbedder(embedder)
    closed.close()
    degraded = RetrievalPipeline(pipeline._catalog, closed, ThreadPoolExecutor(2))
    (result,) = run_async(degraded, [request(QUESTIONS[0], RetrievalMode.HYBRID)])
    assert result.mode is RetrievalMode.LEXICAL and result.hits
    assert result.warnings == (EMBEDDER_FAILED.format(reason="RuntimeError"),)


def offloads_named(calls: list[tuple[str, str]], **pools: ThreadPoolExecutor) -> list[Any]:
    """An offload per pool that records (pool name, function name) of each call."""

    def bound(name: str, pool: ThreadPoolExecutor) -> Callable[..., Any]:
        def offload(fn: Callable[..., Any], *args: Any) -> Any:
            calls.append((name, fn.__name__))
            return asyncio.get_running_loop().run_in_executor(pool, fn, *args)

        return offload

    return [bound(name, pool) for name, pool in pools.items()]


@pytest.mark.parametrize("awaited", [True, False], ids=["batched", "plain-embedder"])
def test_only_a_retrieval_that_waits_for_its_embedding_runs_on_the_waiting_pool(
    pipeline: RetrievalPipeline, embedder: SentenceTransformerEmbedder, awaited: bool
) -> None:
    """The stages go to `offload` (the server's pool sized to the cores); a retrieval whose
    embedder cannot be awaited holds a thread for its embedding, so it goes to `waiting`."""
    lexical = ThreadPoolExecutor(2)
    chosen = pipeline if awaited else RetrievalPipeline(pipeline._catalog, embedder, lexical)
    asked = request(QUESTIONS[1], RetrievalMode.HYBRID)
    calls: list[tuple[str, str]] = []

    async def retrieve() -> RetrievalResult:
        with ThreadPoolExecutor(1) as stages, ThreadPoolExecutor(1) as waiting:
            offload, waits = offloads_named(calls, stages=stages, waiting=waiting)
            return await chosen.retrieve_async(asked, offload, waits)

    with lexical:
        result = asyncio.run(retrieve())
        assert comparable(result) == comparable(chosen.retrieve(asked))
    if awaited:
        assert calls == [("stages", "_begin"), ("stages", "_finish")]
    else:
        assert calls == [("stages", "_begin"), ("waiting", "_retrieve_from")]
