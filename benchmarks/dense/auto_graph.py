"""The "auto" dense index: exact flat vs HNSW graph on real vectors, cost, recall and quality.

Run from the repository root (PYTHONPATH=.:clients/python):
  python -m benchmarks.dense.auto_graph cost    [--index-dir DIR]
  python -m benchmarks.dense.auto_graph engine  [--index-dir DIR]
  python -m benchmarks.dense.auto_graph quality [--embedding-cache FILE] [--sets python,perl,r]
  python -m benchmarks.dense.auto_graph report  (the markdown of what cost/quality recorded)

cost: the python-faq chunk vectors of a built whole-corpus index (benchmarks/ghz/faq_index.py;
--index-dir is its data directory, default the newest under `indexes/` of its cache,
$GW_BENCH_CACHE, else ~/.cache/groundwire-bench) and the 172 python-faq questions embedded with the
bundled model. For the first 2k / 5k / 10k vectors and all of them: single-thread ms per
single-query search at k 50 (what a default Retrieve asks the dense retriever for) of FAISS flat
and of HNSW (M 32, efConstruction 80 and 200) at several efSearch, with recall@50 and recall@10 of
the graph against the exact top-k. This is what the "auto" threshold and the graph's candidate list
are chosen by (core/dense/spec.py).

engine: groundwire's own `FaissIndex` over every python-faq vector, kind "flat" against the default
spec ("auto", past its threshold: a graph searched with `ef_search_for(50)`), the same single-query
searches at k 50 on one thread, passes alternating between the two (median of 7), with recall.

quality: each labelled set (python-faq, perl-faq, r-faq) indexed twice in one `core.eval` run,
flat and "auto" with its graph forced (threshold 0, so every set is searched through the graph
whatever its size), and MRR@10 / Recall@10 of the `default` and `dense` configurations of
`groundwire eval` side by side. Document vectors come from the embedding cache (no model work
for cached texts).

Writes benchmarks/results/auto_graph.{json,md} (each part updates its own section).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from benchmarks.embed.question_sets import SETS as LABELLED_SETS
from benchmarks.ghz.faq_index import DEFAULT_CACHE

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
NAME = "auto_graph"
K = 50
SIZES = (2_000, 5_000, 10_000, None)
EF_CONSTRUCTION = (80, 200)
EF_SEARCH = (64, 100, 150, 200, 256, 400)
SETS = {short: LABELLED_SETS[f"{short}-faq"] for short in ("python", "perl", "r")}
"""The labelled sets by the short names `--sets` takes (`benchmarks/embed/question_sets.py`)."""
LABELS = ("default", "dense")


def newest_index_dir() -> Path:
    """The newest whole-corpus python-faq index `benchmarks/ghz/faq_index.py` cached (its
    $GW_BENCH_CACHE); build one with `python -m benchmarks.ghz.faq_index` first."""
    found = sorted(
        (DEFAULT_CACHE / "indexes").glob("python-faq-*_all_*"), key=lambda p: p.stat().st_mtime
    )
    assert found, (
        f"no python-faq index under {DEFAULT_CACHE}: run python -m benchmarks.ghz.faq_index"
    )
    return found[-1]


def chunk_vectors(data_dir: Path) -> np.ndarray:
    """Every chunk vector of the python-faq collection's saved dense index, in insertion order."""
    from core.dense import faiss_build as build
    from core.dense.faiss_file import read_index_file

    saved = read_index_file(data_dir / "tenants" / "default" / "python-faq" / "dense")
    assert saved is not None, f"no dense index under {data_dir}"
    index = saved.index
    if build.is_graph(index):
        storage = build.hnsw_graph(index).storage
        vectors = storage.reconstruct_n(0, int(index.ntotal))
        return np.asarray(vectors, dtype=np.float32)
    return build.id_map_contents(index)[1]


def question_vectors(dataset: Path) -> np.ndarray:
    from core.embed.sentence_transformer_embedder import (
        SentenceTransformerEmbedder,
        default_model_path,
    )
    from core.eval.beir import load_beir
    from core.retrieve.query_text import normalize_query

    texts = [normalize_query(text, 100_000) for text in load_beir(dataset).queries.values()]
    embedder = SentenceTransformerEmbedder(str(default_model_path()), "cpu", 32)
    return embedder.embed_queries(texts)


def per_query_ms(index: faiss.Index, queries: np.ndarray, params: Any = None) -> float:
    """Best of 3 passes: mean ms of one single-query search (k 50) on one thread."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for row in range(queries.shape[0]):
            index.search(queries[row : row + 1], K, params=params)
        best = min(best, (time.perf_counter() - started) / queries.shape[0] * 1000)
    return best


def recall(found: np.ndarray, exact: np.ndarray, depth: int) -> float:
    """Mean fraction of the exact top-`depth` found in the top `depth`."""
    hits = [
        len(set(a[:depth].tolist()) & set(b[:depth].tolist()))
        for a, b in zip(found, exact, strict=True)
    ]
    return sum(hits) / (depth * exact.shape[0])


def cost(args: argparse.Namespace) -> dict[str, Any]:
    faiss.omp_set_num_threads(1)
    vectors = chunk_vectors(args.index_dir or newest_index_dir())
    queries = question_vectors(SETS["python"])
    rows: list[dict[str, Any]] = []
    for size in SIZES:
        data = vectors if size is None else vectors[:size]
        flat = faiss.IndexFlatIP(data.shape[1])
        flat.add(data)
        exact = flat.search(queries, K)[1]
        flat_ms = per_query_ms(flat, queries)
        row: dict[str, Any] = {"vectors": int(data.shape[0]), "flat_ms": round(flat_ms, 3)}
        print(f"{data.shape[0]} vectors: flat {flat_ms:.3f} ms", file=sys.stderr)
        graphs = []
        for ef_construction in EF_CONSTRUCTION:
            graph = faiss.IndexHNSWFlat(data.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
            graph.hnsw.efConstruction = ef_construction
            started = time.perf_counter()
            graph.add(data)
            build_s = time.perf_counter() - started
            for ef in EF_SEARCH:
                params = faiss.SearchParametersHNSW()
                params.efSearch = ef
                found = graph.search(queries, K, params=params)[1]
                ms = per_query_ms(graph, queries, params)
                graphs.append(
                    {
                        "ef_construction": ef_construction,
                        "build_s": round(build_s, 2),
                        "ef_search": ef,
                        "ms": round(ms, 3),
                        "recall@50": round(recall(found, exact, 50), 4),
                        "recall@10": round(recall(found, exact, 10), 4),
                    }
                )
                print(f"  {graphs[-1]}", file=sys.stderr)
        row["hnsw"] = graphs
        rows.append(row)
    return {"k": K, "queries": int(queries.shape[0]), "m": 32, "rows": rows}


def engine(args: argparse.Namespace) -> dict[str, Any]:
    from core.dense.faiss_index import FaissIndex
    from core.dense.spec import DenseIndexSpec

    faiss.omp_set_num_threads(1)
    vectors = chunk_vectors(args.index_dir or newest_index_dir())
    queries = question_vectors(SETS["python"])
    ids = np.arange(1, vectors.shape[0] + 1, dtype=np.int64)
    specs = {"flat": DenseIndexSpec(kind="flat"), "auto": DenseIndexSpec()}
    indexes: dict[str, FaissIndex] = {}
    build_s: dict[str, float] = {}
    for name, spec in specs.items():
        started = time.perf_counter()
        indexes[name] = FaissIndex.create(spec, vectors.shape[1])
        indexes[name].add(ids, vectors)
        build_s[name] = round(time.perf_counter() - started, 2)
    passes: dict[str, list[float]] = {name: [] for name in specs}
    for _ in range(7):
        for name, index in indexes.items():
            started = time.perf_counter()
            for row in range(queries.shape[0]):
                index.search(queries[row : row + 1], K)
            passes[name].append((time.perf_counter() - started) / queries.shape[0] * 1000)
    exact = indexes["flat"].search(queries, K)[1]
    found = indexes["auto"].search(queries, K)[1]
    auto = specs["auto"]
    return {
        "vectors": int(vectors.shape[0]),
        "queries": int(queries.shape[0]),
        "auto_spec": auto.to_json(),
        "ef_search_at_k50": auto.ef_search_for(K),
        "structure": {name: index.structure for name, index in indexes.items()},
        "build_s": build_s,
        "ms": {name: round(float(np.median(v)), 3) for name, v in passes.items()},
        "passes_ms": {name: [round(x, 3) for x in v] for name, v in passes.items()},
        "recall@50": round(recall(found, exact, 50), 4),
        "recall@10": round(recall(found, exact, 10), 4),
    }


def quality(args: argparse.Namespace) -> dict[str, Any]:
    from core.catalog.collection_config import CollectionConfig
    from core.dense.spec import DenseIndexSpec
    from core.embed.cached_embedder import CachedEmbedder
    from core.embed.embedder_factory import build_embedder
    from core.embed.sentence_transformer_embedder import default_model_path
    from core.eval.beir import load_beir
    from core.eval.runner import evaluate_configurations
    from server.commands.eval_command import configurations
    from server.process_count import query_model_threads
    from server.settings import Settings

    settings = Settings()
    embedder = CachedEmbedder(
        build_embedder(
            str(default_model_path()),
            settings.model.runtime,
            device="cpu",
            batch_size=settings.model.batch_size,
            onnx_cache=args.onnx_cache,
            onnx_threads=query_model_threads(settings.model.onnx_threads, processes=1),
        ),
        args.embedding_cache,
    )
    graph = DenseIndexSpec(kind="auto", auto_graph_threshold=0)
    config = CollectionConfig(
        dense=DenseIndexSpec(kind="flat"),
        chunk_max_tokens=settings.indexing.chunk_max_tokens,
        embedding_model=embedder.model_name,
        embedding_dim=embedder.dimension,
    )
    templates = configurations(settings)
    chosen = {}
    for label in LABELS:
        chosen[f"{label} flat"] = templates[label]
        chosen[f"{label} graph"] = replace(templates[label], collection="graph")
    sets: dict[str, Any] = {}
    for name in args.sets.split(","):
        started = time.perf_counter()
        dataset = load_beir(SETS[name])
        results = evaluate_configurations(
            dataset, embedder, chosen, config, variants={"graph": replace(config, dense=graph)}
        )
        sets[name] = {
            "documents": len(dataset.corpus),
            "queries": len(dataset.queries),
            "seconds": round(time.perf_counter() - started, 1),
            "results": {label: results[label] for label in chosen},
        }
        print(f"{name}: {json.dumps(sets[name]['results'])}", file=sys.stderr)
    spec = graph
    return {
        "graph_spec": spec.to_json(),
        "ef_search_at_k50": spec.ef_search_for(K),
        "sets": sets,
    }


def markdown(record: dict[str, Any]) -> str:
    lines = [f"# The auto dense index: exact flat vs HNSW ({record.get('date', '')})", ""]
    if "cost" in record:
        c = record["cost"]
        lines += [
            f"Cost and recall: python-faq chunk vectors (first n), {c['queries']} real questions,"
            f" single-query searches, one thread, k {c['k']}, HNSW M {c['m']}"
            " (best of 3 passes; recall against the exact top-k).",
            "",
            "| vectors | flat ms | efC | build s | ef | graph ms | recall@50 | recall@10 |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in c["rows"]:
            for g in row["hnsw"]:
                lines.append(
                    f"| {row['vectors']} | {row['flat_ms']} | {g['ef_construction']} | "
                    f"{g['build_s']} | {g['ef_search']} | {g['ms']} | {g['recall@50']} | "
                    f"{g['recall@10']} |"
                )
        lines.append("")
    if "engine" in record:
        e = record["engine"]
        lines += [
            f"Through `FaissIndex`, all {e['vectors']} vectors, {e['queries']} questions, k 50,"
            " one thread, passes alternating (median of 7):",
            "",
            "| index | structure | build s | ms / query | recall@50 | recall@10 |",
            "|---|---|---|---|---|---|",
            f"| flat | {e['structure']['flat']} | {e['build_s']['flat']} | {e['ms']['flat']} | 1 | 1 |",
            f"| auto (default spec, ef {e['ef_search_at_k50']} at k 50) | "
            f"{e['structure']['auto']} | {e['build_s']['auto']} | {e['ms']['auto']} | "
            f"{e['recall@50']} | {e['recall@10']} |",
            "",
        ]
    if "quality" in record:
        q = record["quality"]
        lines += [
            "Quality: `core.eval` with each set indexed flat and as auto with the graph forced"
            f" (threshold 0; graph ef at k 50 = {q['ef_search_at_k50']}), same run:",
            "",
            "| set | config | MRR@10 flat | MRR@10 graph | R@10 flat | R@10 graph |",
            "|---|---|---|---|---|---|",
        ]
        for name, s in q["sets"].items():
            r = s["results"]
            for label in LABELS:
                flat, graph = r[f"{label} flat"], r[f"{label} graph"]
                lines.append(
                    f"| {name}-faq ({s['queries']} q) | {label} | {flat['mrr@10']:.4f} | "
                    f"{graph['mrr@10']:.4f} | {flat['recall@10']:.4f} | {graph['recall@10']:.4f} |"
                )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("cost", "engine", "quality", "report"))
    parser.add_argument("--index-dir", type=Path, default=None)
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        default=DEFAULT_CACHE / "lead" / "emb.sqlite",
        help="document vectors (default: %(default)s)",
    )
    parser.add_argument(
        "--onnx-cache",
        type=Path,
        default=DEFAULT_CACHE / "models",
        help="ONNX builds (default: %(default)s)",
    )
    parser.add_argument("--sets", default="python,perl,r")
    parser.add_argument("--name", default=NAME)
    args = parser.parse_args()
    path = RESULTS / f"{args.name}.json"
    record: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    if args.part != "report":
        parts = {"cost": cost, "engine": engine, "quality": quality}
        record[args.part] = parts[args.part](args)
        record["date"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        record["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform()}
        path.write_text(json.dumps(record, indent=2) + "\n")
    text = markdown(record)
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
