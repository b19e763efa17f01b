"""Hybrid retrieval in Milvus mode: Milvus' own `hybrid_search` (RRF and weighted rankers) or
groundwire's fusion over Milvus dense + BM25 results? Quality and latency on one python-faq
subset, side by side in one run.

Run from the repository root: .venv/bin/python -m benchmarks.quality.milvus_hybrid
    [--dataset DIR] [--distractors N] [--embedding-cache FILE]
Indexes the faq sections plus N random other sections into a milvus-lite database through the
real indexer and `storage.backend = "milvus"` collection (embeddings cached on disk), then per
query: dense top-100 and BM25 top-100 (the keyword query the pipeline sends) fused by
groundwire (RRF k=60; weighted 0.5/0.5), and the same two searches as one `hybrid_search` with
`RRFRanker(60)` and `WeightedRanker(0.5, 0.5)`. Documents rank by their best chunk. Latency is
the wall time of the search calls per query (the query vector is embedded once, before timing).
Prints a table and writes benchmarks/results/milvus_hybrid.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.ghz.faq_index import DEFAULT_CACHE, DEFAULT_DATASET
from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.cached_embedder import CachedEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.eval.beir import load_beir, subset
from core.eval.metrics import mrr_at_k, recall_at_k
from core.eval.runner import EVAL_COLLECTION, index_dataset
from core.indexer import Indexer
from core.lexical.query import sanitize_query
from core.milvus.backend import MilvusBackend
from core.milvus.options import MilvusOptions
from core.milvus.store import MilvusStore
from core.retrieve.fusion import FusionMethod, fuse
from core.retrieve.keywords import extract_keywords, lexical_query
from core.retrieve.query_text import normalize_query

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
CACHE = DEFAULT_CACHE / "milvus" / "python-faq-embeddings.sqlite3"
DEPTH = 100
Ranking = list[tuple[int, float]]


def _documents(ranking: Ranking, documents: Mapping[int, str]) -> list[str]:
    seen: dict[str, None] = {}
    for row_id, _ in ranking:
        seen.setdefault(documents[row_id], None)
    return list(seen)[:10]


def _timed(run: Callable[[Any, str], Ranking], vector: Any, text: str) -> tuple[Ranking, float]:
    started = time.perf_counter()
    ranking = run(vector, text)
    return ranking, (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--distractors", type=int, default=300)
    parser.add_argument("--embedding-cache", type=Path, default=CACHE)
    parser.add_argument("--queries", type=int, default=0, help="first N queries (0 = all)")
    args = parser.parse_args()
    import pymilvus

    dataset = subset(load_beir(args.dataset), "faq/", args.distractors)
    inner = SentenceTransformerEmbedder(default_model_path(), "cpu", 32)
    embedder = CachedEmbedder(inner, args.embedding_cache)
    work = Path(tempfile.mkdtemp(prefix="milvus-hybrid-"))
    backend = MilvusBackend(MilvusOptions(uri=str(work / "milvus.db"), database="bench"))
    catalog = CollectionCatalog(work / "data", backend=backend)
    catalog.open_all()
    config = CollectionConfig(embedding_model=inner.model_name, embedding_dim=inner.dimension)
    index_dataset(dataset, catalog, Indexer(embedder, 200, 1 << 30), config)
    collection = catalog.get(DEFAULT_TENANT, EVAL_COLLECTION)
    store = collection.store
    assert isinstance(store, MilvusStore)
    documents = {c.row_id: c.document_id for b in store.iter_chunks("") for c in b}

    def hybrid(vector: list[float], text: str, ranker: Any) -> Ranking:
        requests = [
            pymilvus.AnnSearchRequest([vector], "vector", {"metric_type": "IP"}, DEPTH),
            pymilvus.AnnSearchRequest([text], "sparse", {"metric_type": "BM25"}, DEPTH),
        ]
        found = store.client.hybrid_search(
            store.chunks, requests, ranker, limit=DEPTH, output_fields=["row_id"]
        )
        return [(int(hit["row_id"]), float(hit["distance"])) for hit in found[0]]

    def ours(method: FusionMethod, vector: Any, text: str) -> Ranking:
        scores, ids = collection.dense_search(vector, DEPTH)
        dense = [(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
        lexical = collection.lexical_search(text, DEPTH)
        return fuse(method, [dense, lexical], 60, [0.5, 0.5])

    methods: dict[str, Callable[[Any, str], Ranking]] = {
        "groundwire RRF (k=60) over Milvus dense + BM25": lambda v, t: ours(FusionMethod.RRF, v, t),
        "groundwire weighted 0.5/0.5 over Milvus dense + BM25": lambda v, t: ours(
            FusionMethod.WEIGHTED, v, t
        ),
        "Milvus hybrid_search RRFRanker(60)": lambda v, t: hybrid(
            v[0].tolist(), sanitize_query(t, 64), pymilvus.RRFRanker(60)
        ),
        "Milvus hybrid_search WeightedRanker(0.5, 0.5)": lambda v, t: hybrid(
            v[0].tolist(), sanitize_query(t, 64), pymilvus.WeightedRanker(0.5, 0.5)
        ),
    }
    scores: dict[str, dict[str, list[float]]] = {
        name: {"mrr": [], "recall": [], "ms": []} for name in methods
    }
    chosen = list(dataset.queries.items())[: args.queries or None]
    print(f"indexed {len(documents)} chunks; running {len(chosen)} queries", flush=True)
    for done, (query_id, raw) in enumerate(chosen, start=1):
        if done % 10 == 0:
            print(f"{done}/{len(chosen)} queries", flush=True)
        query = normalize_query(raw, 100_000)
        vector = embedder.embed_queries([query])
        text = lexical_query(query, extract_keywords(query))
        relevant = dataset.qrels[query_id]
        for name, method in methods.items():
            ranking, ms = _timed(method, vector, text)
            ranked = _documents(ranking, documents)
            scores[name]["mrr"].append(mrr_at_k(ranked, relevant, 10))
            scores[name]["recall"].append(recall_at_k(ranked, relevant, 10))
            scores[name]["ms"].append(ms)
    load = os.getloadavg()
    rows = []
    for name, values in scores.items():
        ms = sorted(values["ms"])
        rows.append(
            {
                "method": name,
                "mrr_at_10": round(statistics.fmean(values["mrr"]), 4),
                "recall_at_10": round(statistics.fmean(values["recall"]), 4),
                "median_ms": round(statistics.median(ms), 2),
                "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
            }
        )
    _, chunks = store.counts()
    meta = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "dataset": f"python-faq subset: faq/ + {args.distractors} distractors",
        "documents": len(dataset.corpus),
        "chunks": chunks,
        "queries": len(chosen),
        "milvus": f"milvus-lite {_version('milvus-lite')}, pymilvus {pymilvus.__version__}",
        "load_average_1_5_15": [round(x, 2) for x in load],
        "depth": DEPTH,
    }
    catalog.close()
    _write(meta, rows)


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


def _write(meta: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "milvus_hybrid.json").write_text(json.dumps({**meta, "rows": rows}, indent=2) + "\n")
    lines = [
        "# Hybrid in Milvus mode: Milvus hybrid_search vs groundwire fusion",
        "",
        *(f"- {key}: {value}" for key, value in meta.items()),
        "",
        "| method | MRR@10 | Recall@10 | median ms | p95 ms |",
        "|---|---|---|---|---|",
        *(
            f"| {r['method']} | {r['mrr_at_10']:.3f} | {r['recall_at_10']:.3f} | "
            f"{r['median_ms']:.1f} | {r['p95_ms']:.1f} |"
            for r in rows
        ),
        "",
    ]
    text = "\n".join(lines)
    (RESULTS / "milvus_hybrid.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
