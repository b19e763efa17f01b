"""Run a BEIR dataset through the real pipeline in a temporary collection and score each configuration."""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.protocol import Embedder
from core.eval.beir import BeirDataset
from core.eval.metrics import evaluate_run
from core.indexer import Indexer
from core.models import Document, SourceType
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.query_text import normalize_query
from core.retrieve.request import RetrievalRequest

EVAL_COLLECTION = "eval"
INDEX_BATCH = 64
CHUNK_HITS = 100


def index_dataset(
    dataset: BeirDataset,
    catalog: CollectionCatalog,
    indexer: Indexer,
    config: CollectionConfig,
    progress: Callable[[int], None] = lambda n: None,
) -> None:
    """Index every corpus document (title as section root, body as plain text)."""
    collection = catalog.create(DEFAULT_TENANT, EVAL_COLLECTION, config)
    batch: list[Document] = []
    for doc in dataset.corpus.values():
        batch.append(Document(doc.doc_id, doc.text, SourceType.TEXT, title=doc.title))
        if len(batch) == INDEX_BATCH:
            indexer.index(collection, batch)
            progress(len(batch))
            batch = []
    if batch:
        indexer.index(collection, batch)
        progress(len(batch))
    collection.checkpoint()


def ranked_documents(pipeline: RetrievalPipeline, request: RetrievalRequest, k: int) -> list[str]:
    """Document ids in order of their best chunk, at most k."""
    result = pipeline.retrieve(replace(request, top_k=CHUNK_HITS))
    seen: dict[str, None] = {}
    for hit in result.hits:
        seen.setdefault(hit.chunk.document_id, None)
    return list(seen)[:k]


def evaluate_configurations(
    dataset: BeirDataset,
    embedder: Embedder,
    configurations: Mapping[str, RetrievalRequest],
    config: CollectionConfig,
    k: int = 10,
    progress: Callable[[str, int], None] = lambda stage, n: None,
) -> dict[str, dict[str, float]]:
    """Metrics@k per configuration label; each request is a template whose query is replaced."""
    with (
        tempfile.TemporaryDirectory(prefix="groundwire-eval-") as tmp,
        ThreadPoolExecutor(2) as pool,
    ):
        catalog = CollectionCatalog(Path(tmp))
        catalog.open_all()
        indexer = Indexer(embedder, config.chunk_max_tokens, max_document_bytes=1 << 30)
        index_dataset(dataset, catalog, indexer, config, lambda n: progress("index", n))
        pipeline = RetrievalPipeline(catalog, embedder, pool)
        results: dict[str, dict[str, float]] = {}
        for label, template in configurations.items():
            run = _run(pipeline, template, dataset.queries, k, functools.partial(progress, label))
            results[label] = evaluate_run(run, dataset.qrels, k)
        catalog.close()
        return results


def _run(
    pipeline: RetrievalPipeline,
    template: RetrievalRequest,
    queries: Mapping[str, str],
    k: int,
    progress: Callable[[int], None],
) -> dict[str, Sequence[str]]:
    run: dict[str, Sequence[str]] = {}
    for query_id, text in queries.items():
        request = replace(
            template, query=normalize_query(text, 100_000), collection=EVAL_COLLECTION
        )
        run[query_id] = ranked_documents(pipeline, request, k)
        progress(1)
    return run
