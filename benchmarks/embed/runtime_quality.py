"""Retrieval quality of each embedding runtime (torch, onnx, onnx-int8) on both labelled sets.

Run from the repository root:
    python -m benchmarks.embed.runtime_quality [--full] [--cache-dir DIR]

For python-faq (/work/shared/data/python-faq, or $PYTHON_FAQ_DIR) and perl-faq
(benchmarks/data/perl-faq) the real pipeline indexes the set once per runtime
(`core.eval.runner.index_dataset`, no whole-section baseline) and scores the server default (hybrid, weighted
fusion) and dense mode, MRR@10 and Recall@10; "auto" (the server default on a CPU: documents by
torch, queries by onnx fp32, `SplitRuntimeEmbedder`); plus "torch index, int8 queries": the
torch-indexed collection queried with onnx-int8 query vectors (what switching a running server to
onnx-int8 without re-indexing gives). `--runtimes` picks from torch, auto, onnx, onnx-int8. Without --full, subsets with distractors (`--subset faq/
--distractors 300` and `--subset perlfaq --distractors 300`, as in granularity_sweep.md).
Document vectors are cached per runtime in SQLite under --cache-dir (keys include the runtime).
Writes benchmarks/results/embed_runtime_quality.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from core.catalog.catalog import CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.cached_embedder import CachedEmbedder
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import load_onnx_embedder
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
    "python-faq": (
        Path(os.environ.get("PYTHON_FAQ_DIR", ROOT.parent / "shared/data/python-faq")),
        "faq/",
    ),
    "perl-faq": (ROOT / "benchmarks" / "data" / "perl-faq", "perlfaq"),
}
DISTRACTORS = 300
CROSS = "torch index, int8 queries"


def evaluate(dataset: BeirDataset, embedder: Embedder) -> dict[str, dict[str, float]]:
    """Index `dataset` with `embedder` in a temporary catalog; metrics@10 per configuration."""
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    with (
        tempfile.TemporaryDirectory(prefix="gw-runtime-quality-") as tmp,
        ThreadPoolExecutor(2) as pool,
    ):
        catalog = CollectionCatalog(Path(tmp))
        catalog.open_all()
        index_dataset(dataset, catalog, Indexer(embedder, config.chunk_max_tokens, 1 << 30), config)
        pipeline = RetrievalPipeline(catalog, embedder, pool)
        results: dict[str, dict[str, float]] = {}
        for label, template in configurations().items():
            run = {
                query_id: ranked_documents(
                    pipeline,
                    replace(
                        template, query=normalize_query(text, 100_000), collection=EVAL_COLLECTION
                    ),
                    10,
                )
                for query_id, text in dataset.queries.items()
            }
            results[label] = evaluate_run(run, dataset.qrels, 10)
        catalog.close()
    return results


def configurations() -> dict[str, RetrievalRequest]:
    """The server default request (settings defaults) and dense mode."""
    r = Settings().retrieval
    base = RetrievalRequest(query="", collection="", top_k=10, candidate_depth=100)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--full", action="store_true", help="whole corpora, no subsets")
    parser.add_argument("--cache-dir", type=Path, default=Path("/work/cache/onnx"))
    parser.add_argument("--onnx-threads", type=int, default=0)
    parser.add_argument("--runtimes", default="torch,onnx,onnx-int8", help="comma-separated")
    parser.add_argument("--distractors", type=int, default=DISTRACTORS)
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated")
    args = parser.parse_args()
    uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    model = default_model_path()
    torch_embedder = SentenceTransformerEmbedder(model, "cpu", 32)
    embedders: dict[str, Embedder] = {"torch": torch_embedder}
    wanted = args.runtimes.split(",")
    onnx: dict[str, Embedder] = {}
    for runtime in (ModelRuntime.ONNX, ModelRuntime.ONNX_INT8):
        if runtime.value not in wanted and not (runtime is ModelRuntime.ONNX and "auto" in wanted):
            continue
        onnx[runtime.value] = load_onnx_embedder(
            Path(model), args.cache_dir / "models", runtime, threads=args.onnx_threads
        )
        if runtime.value in wanted:
            embedders[runtime.value] = onnx[runtime.value]
    if "auto" in wanted:  # the server default on a CPU: torch documents, onnx queries
        embedders["auto"] = SplitRuntimeEmbedder(onnx["onnx"], torch_embedder)
    if "onnx-int8" in wanted:
        embedders[CROSS] = SplitRuntimeEmbedder(onnx["onnx-int8"], torch_embedder)
    cached = {
        name: CachedEmbedder(e, args.cache_dir / "eval-vectors.sqlite")
        for name, e in embedders.items()
    }
    report: dict[str, object] = {"subsets": not args.full, "uptime_before": uptime_before}
    chosen = args.datasets.split(",")
    for dataset_name, (directory, prefix) in DATASETS.items():
        if dataset_name not in chosen:
            continue
        dataset = load_beir(directory)
        if not args.full:
            dataset = subset(dataset, prefix, args.distractors)
        entry: dict[str, object] = {
            "documents": len(dataset.corpus),
            "queries": len(dataset.queries),
            "subset": None if args.full else {"prefix": prefix, "distractors": args.distractors},
        }
        for name, embedder in cached.items():
            started = time.perf_counter()
            results = evaluate(dataset, embedder)
            entry[name] = {"results": results, "seconds": round(time.perf_counter() - started, 1)}
            print(dataset_name, name, json.dumps(results), flush=True)
        report[dataset_name] = entry
    report["uptime_after"] = subprocess.run(
        ["uptime"], capture_output=True, text=True
    ).stdout.strip()
    report["date"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "embed_runtime_quality" + (
        "" if len(chosen) == len(DATASETS) else f"-{'-'.join(chosen)}"
    )
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / f"{name}.md").write_text(markdown(report, list(cached)) + "\n")
    print(markdown(report, list(cached)))


def markdown(report: dict[str, object], runtimes: list[str]) -> str:
    """The comparison table: MRR@10 / Recall@10 per runtime, deltas against torch."""
    lines = [
        "# Retrieval quality per embedding runtime",
        "",
        f"Run {report['date']}; {'subsets with distractors' if report['subsets'] else 'full sets'}. "
        f"Load before: `{report['uptime_before']}`; after: `{report['uptime_after']}`.",
        "",
        "| set | runtime | default MRR@10 | default R@10 | dense MRR@10 | dense R@10 | ΔMRR@10 default / dense vs torch |",
        "|---|---|---|---|---|---|---|",
    ]
    for dataset_name in DATASETS:
        if dataset_name not in report:
            continue
        entry = report[dataset_name]
        assert isinstance(entry, dict)
        torch_results = entry["torch"]["results"]
        for name in runtimes:
            r = entry[name]["results"]
            deltas = " / ".join(
                f"{r[c]['mrr@10'] - torch_results[c]['mrr@10']:+.4f}" for c in ("default", "dense")
            )
            label = f"{dataset_name} ({entry['documents']} docs, {entry['queries']} q)"
            lines.append(
                f"| {label} | {name} | {r['default']['mrr@10']:.4f} | {r['default']['recall@10']:.4f} "
                f"| {r['dense']['mrr@10']:.4f} | {r['dense']['recall@10']:.4f} | {deltas} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
