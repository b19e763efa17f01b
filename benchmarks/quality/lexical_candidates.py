"""Should the chunks only BM25 found get their exact dense score before fusion?
(`retrieval.score_lexical_candidates`, core/retrieve/lexical_candidates.py)

Run from the repository root:
    .venv/bin/python -m benchmarks.quality.lexical_candidates [--datasets perl-faq,r-faq,...]
        [--embedding-cache FILE]

Each labelled set is indexed whole by the real indexer (torch vectors, cached in SQLite under the
same keys as `groundwire eval` and `benchmarks/embed/runtime_quality.py`), then every question runs
through the real pipeline twice, as the request the server builds (`validate_retrieve`) for a
Retrieve with top_k 10 and `max_hits_per_document` 1 (as the peers comparison asks): with the
setting off (the default) and on. Reports MRR@10 / Recall@10 / nDCG@10, the questions whose top
10 changed, those whose relevant document entered or left the top 10, and the stage's mean
milliseconds. Writes benchmarks/results/lexical_candidates.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.embed.question_sets import SETS
from benchmarks.ghz.machine import uptime
from core.catalog.catalog import CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.cached_embedder import CachedEmbedder
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)
from core.eval.beir import BeirDataset, load_beir
from core.eval.metrics import evaluate_run
from core.eval.runner import EVAL_COLLECTION, index_dataset
from core.indexer import Indexer
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest
from groundwire.v1 import retrieval_service_pb2 as rs
from server.retrieve_validation import validate_retrieve
from server.settings import RetrievalSettings, Settings

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
DEFAULT_CACHE = Path.home() / ".cache" / "groundwire-bench" / "onnx" / "eval-vectors.sqlite"
VARIANTS = {"off (default)": False, "on": True}
STAGE = "lexical_candidates"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(SETS), help="comma-separated")
    parser.add_argument("--embedding-cache", type=Path, default=DEFAULT_CACHE)
    return parser.parse_args()


def served_request(text: str, settings: RetrievalSettings) -> RetrievalRequest:
    """The request the server builds for a Retrieve of `text` with one hit per document."""
    message = rs.RetrieveRequest(query=text, top_k=10, max_hits_per_document=1)
    return validate_retrieve(message, settings, EVAL_COLLECTION)


def measure(dataset: BeirDataset, embedder: CachedEmbedder) -> dict[str, Any]:
    """Both variants over one set: metrics, runs and the stage's timings."""
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    settings = Settings().retrieval
    out: dict[str, Any] = {}
    with (
        tempfile.TemporaryDirectory(prefix="gw-lexical-candidates-") as tmp,
        ThreadPoolExecutor(2) as pool,
    ):
        catalog = CollectionCatalog(Path(tmp))
        catalog.open_all()
        index_dataset(dataset, catalog, Indexer(embedder, config.chunk_max_tokens, 1 << 30), config)
        pipeline = RetrievalPipeline(catalog, embedder, pool)
        for label, on in VARIANTS.items():
            run: dict[str, list[str]] = {}
            stage_ms: list[float] = []
            for query_id, text in dataset.queries.items():
                request = served_request(text, replace(settings, score_lexical_candidates=on))
                result = pipeline.retrieve(request)
                run[query_id] = [hit.chunk.document_id for hit in result.hits]
                stage_ms += [ms for name, ms in result.timings if name == STAGE]
            out[label] = {
                "metrics": evaluate_run(run, dataset.qrels, 10),
                "run": run,
                "stage_ms_mean": statistics.fmean(stage_ms) if stage_ms else None,
            }
        catalog.close()
    return out


def compare(dataset: BeirDataset, measured: dict[str, Any]) -> dict[str, Any]:
    """Per-question differences between off and on."""
    off, on = (measured[label]["run"] for label in VARIANTS)

    def found(run: dict[str, list[str]], query_id: str) -> bool:
        return any(dataset.qrels[query_id].get(doc, 0) > 0 for doc in run[query_id][:10])

    queries = list(dataset.queries)
    return {
        "changed": sum(off[q] != on[q] for q in queries),
        "entered": sum(found(on, q) and not found(off, q) for q in queries),
        "left": sum(found(off, q) and not found(on, q) for q in queries),
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Dense scores for the lexical-only candidates (`retrieval.score_lexical_candidates`)",
        "",
        f"Run {report['date']}: `python -m benchmarks.quality.lexical_candidates`."
        f" Load before: `{report['uptime_before']}`; after: `{report['uptime_after']}`.",
        "",
        "Each set indexed whole (torch vectors, section vectors, the `auto` dense index: HNSW past "
        "10,000 chunks); every question as a served default Retrieve with one hit per document "
        "(top_k 10, hybrid, weighted fusion 1 : 0.25, 50 candidates per retriever), the setting "
        "off and on. Questions: changed = top 10 differs; entered / left = the relevant "
        "document came into / dropped out of the top 10.",
        "",
        "| set | setting | MRR@10 | Recall@10 | nDCG@10 | ΔMRR@10 | questions changed | "
        "relevant entered / left | stage ms (mean) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in report["sets"].items():
        base = entry["variants"]["off (default)"]["metrics"]["mrr@10"]
        for label, variant in entry["variants"].items():
            m = variant["metrics"]
            on = label == "on"
            diff = entry["differences"]
            moved = f"{diff['entered']} / {diff['left']}" if on else ""
            stage = variant["stage_ms_mean"]
            lines.append(
                f"| {name} ({entry['documents']} docs, {entry['queries']} q) | {label} "
                f"| {m['mrr@10']:.4f} | {m['recall@10']:.4f} | {m['ndcg@10']:.4f} "
                f"| {m['mrr@10'] - base:+.4f} "
                f"| {diff['changed'] if on else ''} "
                f"| {moved} "
                f"| {'' if stage is None else f'{stage:.3f}'} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    args = parse_args()
    embedder = CachedEmbedder(
        SentenceTransformerEmbedder(default_model_path(), "cpu", 32), args.embedding_cache
    )
    report: dict[str, Any] = {"date": datetime.now(UTC).isoformat(), "uptime_before": uptime()}
    report["sets"] = {}
    for name in args.datasets.split(","):
        dataset = load_beir(SETS[name])
        measured = measure(dataset, embedder)
        report["sets"][name] = {
            "documents": len(dataset.corpus),
            "queries": len(dataset.queries),
            "differences": compare(dataset, measured),
            "variants": {
                label: {k: v for k, v in entry.items() if k != "run"}
                for label, entry in measured.items()
            },
        }
        print(json.dumps({name: report["sets"][name]["variants"]}, indent=1), flush=True)
    report["uptime_after"] = uptime()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "lexical_candidates.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "lexical_candidates.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
