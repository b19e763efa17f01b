"""What tracing costs a Retrieve: pipeline latency with tracing off and on, run in one process.

Run from the repository root: .venv/bin/python -m benchmarks.retrieve.tracing_overhead
    [--dataset DIR] [--sections N] [--rounds R] [--label NAME]

Indexes the first N python-faq sections into a temporary collection, warms a query-embedding
cache with every python-faq query (so the model's ~18 ms on CPU does not drown the difference),
then times `RetrievalPipeline.retrieve` for every query, hybrid mode, no retrieval cache, inside
a root span as the RPC interceptor makes one:

- off: no SDK installed (`tracing.exporter = "none"`): the OpenTelemetry API is a no-op;
- on: an SDK tracer provider, everything sampled, spans batched to an exporter that discards
  them (span creation and processing, no network).

Rounds alternate off and on so drift in machine load hits both. Run the same script with an
older checkout first on PYTHONPATH to get its "before" row (`--label before`); results are
appended to results/tracing_overhead.json and the table is rewritten into tracing_overhead.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.util._once import Once

from benchmarks.ghz.faq_index import DEFAULT_DATASET
from core.cache.query_embedding_cache import QueryEmbeddingCache
from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)
from core.eval.beir import load_beir
from core.indexer import Indexer
from core.models import Document, SourceType
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.query_text import normalize_query
from core.retrieve.request import RetrievalRequest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
COLLECTION = "tracing"


class Discard(SpanExporter):
    """Counts spans and drops them."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS


def set_provider(provider: TracerProvider | None) -> None:
    """Install (or with None remove) the global provider, as OpenTelemetry's test utils do."""
    trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    if provider is not None:
        trace.set_tracer_provider(provider)


def timed_round(pipeline: RetrievalPipeline, queries: Sequence[str]) -> list[float]:
    """Milliseconds per retrieve, each inside a root span like the interceptor's."""
    times = []
    for query in queries:
        request = RetrievalRequest(query=query, collection=COLLECTION)
        started = time.perf_counter()
        with trace.get_tracer("bench").start_as_current_span("rpc"):
            pipeline.retrieve(request)
        times.append((time.perf_counter() - started) * 1000.0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--sections", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--label", default="this branch")
    args = parser.parse_args()
    data = load_beir(args.dataset)
    model = SentenceTransformerEmbedder(default_model_path(), "cpu")
    with tempfile.TemporaryDirectory(prefix="gw-tracing-") as workdir:
        catalog = CollectionCatalog(Path(workdir))
        catalog.open_all()
        config = CollectionConfig(embedding_model=model.model_name, embedding_dim=model.dimension)
        collection = catalog.create(DEFAULT_TENANT, COLLECTION, config)
        documents = [
            Document(doc.doc_id, doc.text, SourceType.TEXT, title=doc.title)
            for doc in list(data.corpus.values())[: args.sections]
        ]
        Indexer(model, config.chunk_max_tokens, 1 << 30).index(collection, documents)
        collection.commit_indexes(collection.store.sequence())
        queries = [normalize_query(q, 100_000) for q in data.queries.values()]
        cached = QueryEmbeddingCache(model, 3600.0, 10_000)
        with ThreadPoolExecutor(2) as pool:
            pipeline = RetrievalPipeline(catalog, cached, pool)
            timed_round(pipeline, queries)  # warms the embedding cache and the store
            exporter = Discard()
            provider = TracerProvider()
            provider.add_span_processor(BatchSpanProcessor(exporter))
            runs: dict[str, list[float]] = {"off": [], "on": []}
            for _ in range(args.rounds):
                for name in ("off", "on"):
                    set_provider(provider if name == "on" else None)
                    runs[name] += timed_round(pipeline, queries)
            set_provider(None)
            provider.shutdown()
        catalog.close()
    row = {
        "label": args.label,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}",
        "sections": args.sections,
        "retrieves_per_setting": len(runs["off"]),
        "spans_per_traced_retrieve": round(exporter.spans / len(runs["on"]), 2),
        **{
            f"{name}_{stat}": value
            for name, times in runs.items()
            for stat, value in (
                ("p50_ms", round(statistics.median(times), 3)),
                ("mean_ms", round(statistics.fmean(times), 3)),
                ("p95_ms", round(statistics.quantiles(times, n=20)[-1], 3)),
            )
        },
    }
    write(row)


def write(row: dict[str, object]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "tracing_overhead.json"
    rows = json.loads(path.read_text()) if path.exists() else []
    rows = [r for r in rows if r["label"] != row["label"]] + [row]
    path.write_text(json.dumps(rows, indent=2) + "\n")
    lines = [
        "# Retrieve latency with tracing off and on",
        "",
        "Produced by `benchmarks/retrieve/tracing_overhead.py`: python-faq, hybrid retrieval "
        "through the real pipeline on CPU, query embeddings cached (the model's time left out so "
        "the difference shows), each retrieve inside a root span as the RPC interceptor makes "
        'one. *off*: no SDK (`tracing.exporter = "none"`); *on*: SDK, all sampled, batched to an '
        "exporter that discards. Off and on alternate in rounds within one process; *before* is "
        "the same script run against the commit before tracing existed (ec8d83d). The machine "
        "is shared (load in the table): rows from different processes move by tens of percent "
        "with the load, so compare off with on within a row, and see "
        "`stage_timer_overhead.md` for the per-stage cost measured directly. Runs 1 and 2 of "
        "this branch predate caching the tracer per provider (each span looked it up).",
        "",
        "| code | machine | retrieves | off p50 ms | on p50 ms | off mean ms | on mean ms | "
        "off p95 ms | on p95 ms | spans per traced retrieve |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['label']} | {r['machine']} | {r['retrieves_per_setting']} | {r['off_p50_ms']} | "
            f"{r['on_p50_ms']} | {r['off_mean_ms']} | {r['on_mean_ms']} | {r['off_p95_ms']} | "
            f"{r['on_p95_ms']} | {r['spans_per_traced_retrieve']} |"
        )
    (RESULTS / "tracing_overhead.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
