"""HNSW and IVF recall@10 against exact search, and their queries/s, on real MiniLM embeddings.

Run: /tmp/gwvenv/bin/python benchmarks/dense/ann_recall.py [--cache DIR] [--max-passages N]
Data (see ann_corpus.py): python-faq sections split into ~150-word passages, embedded once with
the bundled all-MiniLM-L6-v2 and cached (the first run embeds ~12k passages: ~10 minutes on 2 CPU
cores; later runs reuse the cache). Queries: the 172 python-faq questions plus the first sentence
of 800 held-out passages. Engines are groundwire's own `FaissIndex` kinds; HNSW sweeps efSearch
with M=32, efConstruction=80; IVF sweeps nprobe for nlist from the default rule
(min(4*sqrt(n), n/39): FAISS wants >= 39 training points per list) and for sqrt(n).
QPS (best of 3 passes): single-thread one query per call, and batch (all queries in one call,
all cores).
Prints the table and writes benchmarks/results/ann_recall.{json,md}; the spec defaults are marked.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import torch
from ann_corpus import AnnData, load

from core.dense.faiss_build import configure
from core.dense.faiss_index import FaissIndex
from core.dense.spec import DenseIndexSpec, ivf_nlist_for
from core.dense.torch_exact import TorchExactIndex

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))  # run as a file: `benchmarks` importable

from benchmarks.ghz.faq_index import DEFAULT_DATASET  # noqa: E402

K = 10
EF_SEARCH = (16, 24, 32, 48, 64, 96, 128, 192, 256)
DEFAULTS = DenseIndexSpec()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--dataset",
        type=Path,
        default=DEFAULT_DATASET,
        help="BEIR dir (default: $PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout)",
    )
    parser.add_argument("--cache", type=Path, default=Path("/tmp/groundwire-ann-cache"))
    parser.add_argument("--max-passages", type=int, default=15_000)
    parser.add_argument("--held-out", type=int, default=800)
    args = parser.parse_args()
    data = load(args.dataset, args.cache, args.max_passages, args.held_out)
    rows = run(data)
    write(data, rows)


def run(data: AnnData) -> list[dict[str, Any]]:
    """Every measured configuration as a row: engine, parameters, recall@10, QPS."""
    vectors, queries = data.passage_vectors, data.query_vectors
    ids = np.arange(len(vectors), dtype=np.int64)
    truth = exact_ids(vectors, queries)
    rows: list[dict[str, Any]] = []
    flat = FaissIndex.create(DenseIndexSpec(kind="flat"), vectors.shape[1])
    flat.add(ids, vectors)
    rows.append(measure("faiss-flat (exact)", {}, flat, data, truth, build_s=0.0))
    torch_exact = TorchExactIndex.create(vectors.shape[1])
    torch_exact.add(ids, vectors)
    rows.append(measure("torch-exact (cpu, fp32)", {}, torch_exact, data, truth, build_s=0.0))
    spec = DenseIndexSpec(kind="hnsw", hnsw_m=32, hnsw_ef_construction=80)
    hnsw, build_s = built(spec, ids, vectors)
    for ef in EF_SEARCH:
        configure(hnsw.faiss_index, dataclasses.replace(spec, hnsw_ef_search=ef))
        params = {"M": 32, "efConstruction": 80, "efSearch": ef}
        row = measure("faiss-hnsw", params, hnsw, data, truth, build_s)
        row["default"] = ef == DEFAULTS.hnsw_ef_search
        rows.append(row)
    default_nlist = ivf_nlist_for(DenseIndexSpec(kind="ivf_flat"), len(vectors))
    assert default_nlist is not None
    for nlist in sorted({default_nlist, int(math.sqrt(len(vectors)))}):
        spec = DenseIndexSpec(kind="ivf_flat", ivf_nlist=nlist)
        ivf, build_s = built(spec, ids, vectors)
        assert ivf.is_trained, f"nlist={nlist} needs {39 * nlist} vectors to train"
        for nprobe in nprobes(nlist):
            configure(ivf.faiss_index, dataclasses.replace(spec, ivf_nprobe=nprobe))
            row = measure(
                "faiss-ivf_flat", {"nlist": nlist, "nprobe": nprobe}, ivf, data, truth, build_s
            )
            row["default"] = nlist == default_nlist and nprobe == DEFAULTS.ivf_nprobe
            rows.append(row)
    return rows


def exact_ids(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Exact top-K row ids (int64 (q, K)) by brute-force float32 inner product."""
    similarity = queries @ vectors.T
    return np.argsort(-similarity, axis=1, kind="stable")[:, :K].astype(np.int64)


def built(spec: DenseIndexSpec, ids: np.ndarray, vectors: np.ndarray) -> tuple[FaissIndex, float]:
    """An index of `spec` holding every vector, and the seconds the build took."""
    started = time.perf_counter()
    index = FaissIndex.create(spec, vectors.shape[1])
    index.add(ids, vectors)
    return index, time.perf_counter() - started


def nprobes(nlist: int) -> list[int]:
    """1, 2, 4, ... up to nlist, and nlist itself."""
    values = [2**i for i in range(int(math.log2(nlist)) + 1)]
    return sorted({*values, nlist})


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    """Mean fraction of the exact top-K found."""
    hits = sum(len(set(a.tolist()) & set(b.tolist())) for a, b in zip(found, truth, strict=True))
    return hits / truth.size


def measure(
    engine: str,
    params: dict[str, int],
    index: FaissIndex | TorchExactIndex,
    data: AnnData,
    truth: np.ndarray,
    build_s: float,
) -> dict[str, Any]:
    """Recall@K (all queries and FAQ questions only) and single/batch queries per second."""
    queries = data.query_vectors
    threads = os.cpu_count() or 1
    faiss.omp_set_num_threads(1)
    torch.set_num_threads(1)
    found = np.concatenate([index.search(queries[i : i + 1], K)[1] for i in range(len(queries))])
    single_s = min(
        timed(lambda: [index.search(queries[i : i + 1], K) for i in range(len(queries))])
        for _ in range(3)
    )
    single_qps = len(queries) / single_s
    faiss.omp_set_num_threads(threads)
    torch.set_num_threads(threads)
    batch_s = min(timed(lambda: index.search(queries, K)) for _ in range(3))
    faq = data.faq_queries
    return {
        "engine": engine,
        "params": params,
        "recall@10": round(recall(found, truth), 4),
        "recall@10 faq": round(recall(found[:faq], truth[:faq]), 4),
        "qps single-thread": round(single_qps, 1),
        "qps batch": round(len(queries) / batch_s, 1),
        "build_s": round(build_s, 2),
        "default": False,
    }


def timed(call: Any) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def write(data: AnnData, rows: list[dict[str, Any]]) -> None:
    date = datetime.now(UTC).isoformat(timespec="seconds")
    machine = f"{os.cpu_count()} CPU cores ({platform.processor() or platform.machine()}), no GPU"
    header = (
        f"# ANN recall vs QPS ({date}, {machine})\n\n"
        f"{len(data.passages):,} python-faq passages (~150 words, MiniLM 384-d), "
        f"{len(data.queries)} queries ({data.faq_queries} python-faq questions + "
        f"{len(data.queries) - data.faq_queries} held-out passage first sentences); recall@10 "
        "against exact search. QPS single-thread: one query per call, 1 FAISS thread; batch: all "
        f"queries in one call, {os.cpu_count()} threads; best of 3 passes (shared machine: QPS is "
        "indicative). "
        "**bold** = the `DenseIndexSpec` default.\n\n"
    )
    lines = [
        "| engine | parameters | recall@10 | recall@10 (faq) | QPS single | QPS batch | build s |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        params = ", ".join(f"{k}={v}" for k, v in row["params"].items()) or "-"
        if row["default"]:
            params = f"**{params} (default)**"
        lines.append(
            f"| {row['engine']} | {params} | {row['recall@10']:.3f} | {row['recall@10 faq']:.3f} "
            f"| {row['qps single-thread']:,.0f} | {row['qps batch']:,.0f} | {row['build_s']:.1f} |"
        )
    table = "\n".join(lines)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ann_recall.md").write_text(header + table + "\n")
    report = {
        "date": date,
        "machine": machine,
        "passages": len(data.passages),
        "queries": len(data.queries),
        "faq_queries": data.faq_queries,
        "k": K,
        "rows": rows,
    }
    (RESULTS / "ann_recall.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
