"""Retrieval quality of each embedding runtime (torch, onnx, onnx-int8) on the labelled sets.

Run from the repository root:
    python -m benchmarks.embed.runtime_quality [--full] [--cache-dir DIR] [--embedding-cache FILE]
        [--query-model NAME=FILE.onnx ...]

For python-faq ($PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout), perl-faq
(benchmarks/data/perl-faq), r-faq (benchmarks/data/r-faq) and man-pages (benchmarks/data/man-pages,
held out), as `question_sets.py` finds them, the
real pipeline indexes the set once per document runtime (`core.eval.runner.index_dataset`, section
vectors as configured by default, no whole-section baseline) and scores the server default (hybrid,
weighted fusion, default section weight) and dense mode, MRR@10 and Recall@10, for every query
runtime that reads that index: "torch", "onnx" and "onnx-int8" (documents and queries alike),
"auto" (the server default on a CPU: documents by the fp32 export, queries by the per-token int8
file) with the fp32 export's own queries on the same index beside it (auto before 2026-11-29) and,
with torch, "torch index, onnx queries" (auto before 2026-11-25: documents by torch); with torch
and onnx-int8, "torch index, int8 queries" (the torch-indexed collection queried with onnx-int8
vectors) and, for each
`--query-model NAME=FILE`, "torch index, NAME queries": the same torch index queried by that ONNX
file (e.g. a quantisation variant from benchmarks/embed/int8_query_variants.py). Runtimes that
share a document runtime share its index. `--runtimes` picks from torch, auto, onnx, onnx-int8
and onnx-plain (the fp32 export unfused, as `onnx` served it before recipe groundwire-onnx-5, on
an index of its own; with auto also "auto on the unfused export's documents"); a document runtime
not picked is not indexed; `--datasets` from the sets above.
Without --full, subsets with distractors (`--subset faq/ --distractors 300` and `--subset
perlfaq --distractors 300`; r-faq and man-pages always whole, as in granularity_sweep.md).
Document vectors are cached in SQLite (`--embedding-cache`, default --cache-dir/eval-vectors.sqlite;
keys include the runtime, torch's are `groundwire eval`'s).
Writes benchmarks/results/embed_runtime_quality[-<sets>][-<--name>].{json,md}.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from benchmarks.embed.plain_export import PLAIN, plain_export
from benchmarks.embed.question_sets import SETS
from benchmarks.ghz.faq_index import DEFAULT_CACHE
from benchmarks.ghz.machine import uptime
from core.catalog.catalog import CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.cached_embedder import CachedEmbedder
from core.embed.delegating_embedder import DelegatingEmbedder
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import load_onnx_embedder, session_on, variant_dir
from core.embed.onnx_embedder import OnnxEmbedder
from core.embed.protocol import Embedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.embed.split_runtime_embedder import SplitRuntimeEmbedder
from core.eval.beir import BeirDataset, load_beir, subset
from core.eval.metrics import evaluate_run
from core.eval.runner import EVAL_COLLECTION, index_dataset, ranked_documents
from core.indexer import Indexer
from core.retrieve.fusion import FusionMethod
from core.retrieve.modes import RetrievalMode
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.query_text import normalize_query
from core.retrieve.request import RetrievalRequest
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
DATASETS = {
    "python-faq": (SETS["python-faq"], "faq/"),
    "perl-faq": (SETS["perl-faq"], "perlfaq"),
    "r-faq": (SETS["r-faq"], None),
    "man-pages": (SETS["man-pages"], None),
}
DISTRACTORS = 300
AUTO_BEFORE = "torch index, onnx queries"
CROSS = "torch index, int8 queries"
AUTO_FP32 = "onnx (fp32 export documents and queries; auto before 2026-11-29)"
AUTO_PLAIN = "auto on the unfused export's documents (auto before groundwire-onnx-5)"


class BatchedQueries(DelegatingEmbedder):
    """`inner` with every query of the set embedded up front in seeded random batches of
    `batch` (as the server's micro-batcher groups concurrent questions); `embed_queries` returns
    those rows. Dynamic int8 quantises activations per call, so its vectors depend on the batch."""

    def __init__(self, inner: Embedder, texts: list[str], batch: int, seed: int = 0) -> None:
        order = list(dict.fromkeys(texts))
        random.Random(seed).shuffle(order)
        self._rows: dict[str, np.ndarray] = {}
        for start in range(0, len(order), batch):
            chunk = order[start : start + batch]
            self._rows.update(zip(chunk, inner.embed_queries(chunk), strict=True))
        super().__init__(inner)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.vstack([self._rows[t] for t in texts])


def evaluate(
    dataset: BeirDataset, documents: Embedder, queries: dict[str, Embedder], query_batch: int = 1
) -> dict[str, dict[str, dict[str, float]]]:
    """Index `dataset` with `documents` in a temporary catalog once; metrics@10 per
    configuration for each query embedder (by name) over that index; with `query_batch` > 1
    the queries are embedded in random batches of that size first (`BatchedQueries`)."""
    config = CollectionConfig(
        embedding_model=documents.model_name, embedding_dim=documents.dimension
    )
    with (
        tempfile.TemporaryDirectory(prefix="gw-runtime-quality-") as tmp,
        ThreadPoolExecutor(2) as pool,
    ):
        catalog = CollectionCatalog(Path(tmp))
        catalog.open_all()
        index_dataset(
            dataset, catalog, Indexer(documents, config.chunk_max_tokens, 1 << 30), config
        )
        by_query: dict[str, dict[str, dict[str, float]]] = {}
        texts = [normalize_query(text, 100_000) for text in dataset.queries.values()]
        for name, embedder in queries.items():
            if query_batch > 1:
                embedder = BatchedQueries(embedder, texts, query_batch)
            pipeline = RetrievalPipeline(catalog, embedder, pool)
            results: dict[str, dict[str, float]] = {}
            for label, template in configurations().items():
                run = {
                    query_id: ranked_documents(
                        pipeline,
                        replace(
                            template,
                            query=normalize_query(text, 100_000),
                            collection=EVAL_COLLECTION,
                        ),
                        10,
                    )
                    for query_id, text in dataset.queries.items()
                }
                results[label] = evaluate_run(run, dataset.qrels, 10)
            by_query[name] = results
        catalog.close()
    return by_query


def configurations() -> dict[str, RetrievalRequest]:
    """The server default request (settings defaults) and dense mode."""
    r = Settings().retrieval
    base = RetrievalRequest(
        query="", collection="", top_k=10, candidate_depth=100, section_weight=r.section_weight
    )
    return {
        "default": replace(
            base,
            mode=r.mode,
            fusion=r.fusion,
            rrf_k=r.rrf_k,
            dense_weight=r.dense_weight,
            lexical_weight=r.lexical_weight,
        ),
        "dense": replace(base, mode=RetrievalMode.DENSE, fusion=FusionMethod.WEIGHTED),
    }


def query_model(path: Path, build: Path, threads: int) -> OnnxEmbedder:
    """An ONNX query model file run with the tokenizer and spec of the build in `build`."""
    return session_on(
        build, path, ModelRuntime.ONNX_INT8, model_name=str(default_model_path()), threads=threads
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--full", action="store_true", help="whole corpora, no subsets")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=DEFAULT_CACHE / "onnx",
        help="ONNX builds (under models/) and vectors (default: %(default)s)",
    )
    parser.add_argument("--embedding-cache", type=Path, default=None)
    parser.add_argument("--onnx-threads", type=int, default=0)
    parser.add_argument("--runtimes", default="torch,onnx,onnx-int8", help="comma-separated")
    parser.add_argument(
        "--query-model", action="append", default=[], help="NAME=FILE.onnx, repeatable"
    )
    parser.add_argument("--distractors", type=int, default=DISTRACTORS)
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated")
    parser.add_argument("--name", default="", help="suffix of the result files")
    parser.add_argument(
        "--query-batch",
        type=int,
        default=1,
        help="embed each set's queries in seeded random batches of this size (default: alone)",
    )
    args = parser.parse_args()
    uptime_before = uptime()
    model = default_model_path()
    torch_embedder = SentenceTransformerEmbedder(model, "cpu", 32)
    wanted = args.runtimes.split(",")
    onnx: dict[str, OnnxEmbedder] = {}
    for runtime in (ModelRuntime.ONNX, ModelRuntime.ONNX_INT8):
        needed = (
            runtime.value in wanted
            or "auto" in wanted
            or (runtime is ModelRuntime.ONNX and (args.query_model or PLAIN in wanted))
        )
        if needed:
            onnx[runtime.value] = load_onnx_embedder(
                Path(model), args.cache_dir / "models", runtime, threads=args.onnx_threads
            )
    # document runtime -> {row name: query embedder}; every row of a document runtime shares
    # its index
    documents: dict[str, Embedder] = {"torch": torch_embedder}
    rows: dict[str, dict[str, Embedder]] = {"torch": {}}
    if "torch" in wanted:
        rows["torch"]["torch"] = torch_embedder
    if "auto" in wanted:  # the server default on a CPU: fp32 export documents, int8 queries
        if "torch" in wanted:
            rows["torch"][AUTO_BEFORE] = SplitRuntimeEmbedder(onnx["onnx"], torch_embedder)
        documents["onnx"] = onnx["onnx"]
        if "onnx" not in wanted:  # else the onnx row below is this one
            rows.setdefault("onnx", {})[AUTO_FP32] = onnx["onnx"]
        rows.setdefault("onnx", {})["auto"] = SplitRuntimeEmbedder(onnx["onnx-int8"], onnx["onnx"])
    if "onnx-int8" in wanted and "torch" in wanted:
        rows["torch"][CROSS] = SplitRuntimeEmbedder(onnx["onnx-int8"], torch_embedder)
    for entry in args.query_model:
        label, _, file = entry.partition("=")
        build = variant_dir(Path(model), args.cache_dir / "models")
        queries = query_model(Path(file), build, args.onnx_threads)
        rows["torch"][f"torch index, {label} queries"] = SplitRuntimeEmbedder(
            queries, torch_embedder
        )
    for runtime in ("onnx", "onnx-int8"):
        if runtime in wanted:
            documents[runtime] = onnx[runtime]
            rows.setdefault(runtime, {})[runtime] = onnx[runtime]
    if PLAIN in wanted:  # the fp32 export unfused (before groundwire-onnx-5), its own index
        plain = plain_export(onnx["onnx"], model, 32, args.onnx_threads)
        documents[PLAIN] = plain
        rows[PLAIN] = {PLAIN: plain}
        if "auto" in wanted:
            rows[PLAIN][AUTO_PLAIN] = SplitRuntimeEmbedder(onnx["onnx-int8"], plain)
    vectors = args.embedding_cache or args.cache_dir / "eval-vectors.sqlite"
    cached = {name: CachedEmbedder(e, vectors) for name, e in documents.items()}
    names = [name for group in rows.values() for name in group]
    report: dict[str, object] = {"subsets": not args.full, "uptime_before": uptime_before}
    chosen = args.datasets.split(",")
    for dataset_name, (directory, prefix) in DATASETS.items():
        if dataset_name not in chosen:
            continue
        dataset = load_beir(directory)
        if not args.full and prefix is not None:
            dataset = subset(dataset, prefix, args.distractors)
        entry: dict[str, object] = {
            "documents": len(dataset.corpus),
            "queries": len(dataset.queries),
            "subset": None
            if args.full or prefix is None
            else {"prefix": prefix, "distractors": args.distractors},
        }
        for document_runtime, group in rows.items():
            if not group:
                continue
            started = time.perf_counter()
            by_query = evaluate(dataset, cached[document_runtime], group, args.query_batch)
            seconds = round(time.perf_counter() - started, 1)
            for name, results in by_query.items():
                entry[name] = {"results": results, "index_seconds_shared": seconds}
                print(dataset_name, name, json.dumps(results), flush=True)
        report[dataset_name] = entry
    report["uptime_after"] = uptime()
    report["date"] = datetime.now(UTC).isoformat(timespec="seconds")
    report["query_models"] = args.query_model
    report["query_batch"] = args.query_batch
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "embed_runtime_quality" + (
        "" if len(chosen) == len(DATASETS) else f"-{'-'.join(chosen)}"
    )
    if args.name:
        name += f"-{args.name}"
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / f"{name}.md").write_text(markdown(report, names) + "\n")
    print(markdown(report, names))


def _batching(report: dict[str, object]) -> str:
    batch = report.get("query_batch", 1)
    return "one at a time" if batch == 1 else f"in seeded random batches of {batch}"


def markdown(report: dict[str, object], runtimes: list[str]) -> str:
    """The comparison table: MRR@10 / Recall@10 per runtime, deltas against torch and against
    auto (today's server default) when it ran; Recall@10 deltas in questions."""
    lines = [
        "# Retrieval quality per embedding runtime",
        "",
        f"Run {report['date']}; {'subsets with distractors' if report['subsets'] else 'full sets'}; "
        f"queries embedded {_batching(report)}. "
        f"Load before: `{report['uptime_before']}`; after: `{report['uptime_after']}`.",
        "",
        "| set | runtime | default MRR@10 | default R@10 | dense MRR@10 | dense R@10 "
        "| ΔMRR@10 default / dense vs torch | vs auto: ΔMRR@10 default / dense, ΔR@10 in questions |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dataset_name in DATASETS:
        if dataset_name not in report:
            continue
        entry = report[dataset_name]
        assert isinstance(entry, dict)
        queries = entry["queries"]
        for name in runtimes:
            r = entry[name]["results"]
            against = []
            for base in ("torch", "auto"):
                if base not in entry:
                    against.append("")
                    continue
                b = entry[base]["results"]
                cell = " / ".join(
                    f"{r[c]['mrr@10'] - b[c]['mrr@10']:+.4f}" for c in ("default", "dense")
                )
                if base == "auto":
                    cell += ", " + " / ".join(
                        f"{round((r[c]['recall@10'] - b[c]['recall@10']) * queries):+d}"
                        for c in ("default", "dense")
                    )
                against.append(cell)
            label = f"{dataset_name} ({entry['documents']} docs, {queries} q)"
            lines.append(
                f"| {label} | {name} | {r['default']['mrr@10']:.4f} | {r['default']['recall@10']:.4f} "
                f"| {r['dense']['mrr@10']:.4f} | {r['dense']['recall@10']:.4f} | {against[0]} "
                f"| {against[1]} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
