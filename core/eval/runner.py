"""Run a BEIR dataset through the real pipeline in a temporary collection and score each configuration."""

from __future__ import annotations

import functools
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from core.cache.query_embedding_cache import QueryEmbeddingCache
from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.embed.protocol import Embedder
from core.eval.beir import BeirDataset
from core.eval.metrics import evaluate_run
from core.indexer import Indexer
from core.models import Document, SourceType
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.query_text import normalize_query
from core.retrieve.request import RetrievalRequest
from core.tune.collection_embedders import CollectionEmbedders
from core.tune.options import TuneOptions
from core.tune.tuner import CollectionTuner, TuneReport

EVAL_COLLECTION = "eval"
TUNED_COLLECTION = "tuned"
"""With `Tuning`: a copy of the eval collection, tuned (a configuration names it to search it)."""
INDEX_BATCH = 64
CHUNK_HITS = 100
BASELINE = "whole-section baseline"
"""One vector per whole corpus document (`title + "\\n" + text`, the model keeps its first tokens),
exact cosine search: what a plain vector store gives with the same model."""


def index_dataset(
    dataset: BeirDataset,
    catalog: CollectionCatalog,
    indexer: Indexer,
    config: CollectionConfig,
    progress: Callable[[int], None] = lambda n: None,
    name: str = EVAL_COLLECTION,
    source_type: SourceType = SourceType.TEXT,
) -> None:
    """Index every corpus document into `name`: title as section root, body as `source_type`
    (plain text by default; Markdown splits each body at its own headings)."""
    collection = catalog.create(DEFAULT_TENANT, name, config)
    batch: list[Document] = []
    for doc in dataset.corpus.values():
        batch.append(Document(doc.doc_id, doc.text, source_type, title=doc.title))
        if len(batch) == INDEX_BATCH:
            indexer.index(collection, batch)
            progress(len(batch))
            batch = []
    if batch:
        indexer.index(collection, batch)
        progress(len(batch))
    collection.checkpoint()


@dataclass(frozen=True, slots=True)
class Tuning:
    """Tune a copy of the eval collection (`TUNED_COLLECTION`) before scoring: the tuner, the
    per-collection embedders it and the pipeline share, and the bounds."""

    tuner: CollectionTuner
    embedders: CollectionEmbedders
    options: TuneOptions


def ranked_documents(pipeline: RetrievalPipeline, request: RetrievalRequest, k: int) -> list[str]:
    """Document ids in order of their best chunk, at most k."""
    result = pipeline.retrieve(replace(request, top_k=CHUNK_HITS))
    seen: dict[str, None] = {}
    for hit in result.hits:
        seen.setdefault(hit.chunk.document_id, None)
    return list(seen)[:k]


def whole_section_run(
    dataset: BeirDataset,
    embedder: Embedder,
    k: int,
    progress: Callable[[int], None] = lambda n: None,
) -> dict[str, Sequence[str]]:
    """The plain vector store's ranking: documents by the cosine of their one whole-text vector."""
    doc_ids = list(dataset.corpus)
    blocks = []
    for start in range(0, len(doc_ids), INDEX_BATCH):
        batch = [dataset.corpus[i] for i in doc_ids[start : start + INDEX_BATCH]]
        blocks.append(embedder.embed_documents([f"{d.title}\n{d.text}" for d in batch]))
        progress(len(batch))
    documents = np.concatenate(blocks) if blocks else np.empty((0, embedder.dimension), np.float32)
    query_ids = list(dataset.queries)
    texts = [normalize_query(dataset.queries[q], 100_000) for q in query_ids]
    queries = embedder.embed_queries(texts) if texts else np.empty((0, 0), np.float32)
    run: dict[str, Sequence[str]] = {}
    for row, query_id in enumerate(query_ids):
        scores = documents @ queries[row]
        top = np.argsort(-scores, kind="stable")[:k]
        run[query_id] = [doc_ids[i] for i in top]
    return run


def evaluate_configurations(
    dataset: BeirDataset,
    embedder: Embedder,
    configurations: Mapping[str, RetrievalRequest],
    config: CollectionConfig,
    k: int = 10,
    progress: Callable[[str, int], None] = lambda stage, n: None,
    variants: Mapping[str, CollectionConfig] | None = None,
    tuning: Tuning | None = None,
    tune_reports: list[TuneReport] | None = None,
    source_type: SourceType = SourceType.TEXT,
) -> dict[str, dict[str, float]]:
    """Metrics@k of the whole-section baseline (`BASELINE`) and of each configuration label; each
    request is a template whose query is replaced.

    The dataset is indexed with `config` (the collection a template with an empty `collection`
    searches) and once more per entry of `variants` (collection config by name; a template names
    the variant in its `collection`). The embedder should cache: variants re-embed the same texts.
    With `tuning`, one more copy (`TUNED_COLLECTION`) is indexed and tuned (never reading the
    queries or labels), its report appended to `tune_reports`. `source_type`: how every copy
    reads the document bodies (`index_dataset`).
    """
    with (
        tempfile.TemporaryDirectory(prefix="groundwire-eval-") as tmp,
        ThreadPoolExecutor(2) as pool,
    ):
        catalog = CollectionCatalog(Path(tmp))
        catalog.open_all()
        indexer = Indexer(embedder, config.chunk_max_tokens, max_document_bytes=1 << 30)
        index = functools.partial(index_dataset, dataset, catalog, indexer, source_type=source_type)
        index(config, lambda n: progress("index", n))
        for name, variant in (variants or {}).items():
            index(variant, functools.partial(progress, f"index {name}"), name)
        if tuning is not None:
            index(config, functools.partial(progress, "index tuned"), TUNED_COLLECTION)
            tuned = catalog.get(DEFAULT_TENANT, TUNED_COLLECTION)
            report = tuning.tuner.tune(
                tuned,
                tuning.options,
                lambda p: progress(f"tune {p.stage}", 0),
            )
            if tune_reports is not None:
                tune_reports.append(report)
        # Each query is embedded once per model, not once per configuration.
        queries = QueryEmbeddingCache(embedder, math.inf, max(1, 2 * len(dataset.queries)))
        query_embedders = None if tuning is None else _cached(queries, tuning.embedders.queries)
        pipeline = RetrievalPipeline(catalog, queries, pool, query_embedders=query_embedders)
        baseline = whole_section_run(dataset, embedder, k, lambda n: progress("baseline", n))
        results: dict[str, dict[str, float]] = {BASELINE: evaluate_run(baseline, dataset.qrels, k)}
        for label, template in configurations.items():
            run = _run(pipeline, template, dataset.queries, k, functools.partial(progress, label))
            results[label] = evaluate_run(run, dataset.qrels, k)
        catalog.close()
        return results


def _cached(
    cache: QueryEmbeddingCache, embedders: Callable[[Collection], Embedder]
) -> Callable[[Collection], Embedder]:
    """Each collection's query embedder behind `cache` (its entries are kept per model)."""
    return lambda collection: cache.for_embedder(embedders(collection))


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
            template,
            query=normalize_query(text, 100_000),
            collection=template.collection or EVAL_COLLECTION,
        )
        run[query_id] = ranked_documents(pipeline, request, k)
        progress(1)
    return run
