"""FAISS over the real python-faq index: N queries in one call against N calls of one (#16).

Run from the repository root (PYTHONPATH=$PWD:$PWD/clients/python in a worktree):

    python -m benchmarks.dense.combined_search_raw [--dense-dir DIR] [--rounds 5]

`--dense-dir`: the python-faq collection's dense directory (default: the ghz index,
`benchmarks/ghz/faq_index.ensure_index`, built once). Queries: the 172 python-faq questions
embedded by the packaged MiniLM; top 50 (the default depth). For N = 1, 2, 4, 8, 16, in the same
run, rounds interleaved, CPU time of the whole process (all threads) per query:

- `alone`: N calls of one query through `FaissIndex.search` (one OpenMP thread: today's path);
- `scan`: one call of N queries with FAISS's default BLAS threshold (a per-query scan each);
- `blas`: one call of N queries, `faiss_shared_scan` (one sgemm per block of stored vectors),
  one OpenMP thread (`faiss_threads`): what a combined search costs;
- `blas-2t`: the same with the default OpenMP team (2 threads on this host);
- `numpy`: `queries @ vectors.T` + argpartition (NumPy's OpenBLAS held to one thread).

Also compares each combined row with the same query searched alone (ids, scores). Writes
results/dense_combined_raw.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import faiss
import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.ghz.faq_index import COLLECTION, DEFAULT_CACHE, DEFAULT_DATASET, ensure_index
from benchmarks.ghz.machine import uptime
from benchmarks.ghz.request_files import load_questions
from core.dense import faiss_threads
from core.dense.faiss_index import FaissIndex
from core.dense.faiss_shared_scan import SHARED_SCAN_MIN_FLOATS

RESULTS = Path(__file__).resolve().parents[1] / "results"
FAISS_DEFAULT_THRESHOLD = 128_000
K = 50
SIZES = (1, 2, 4, 8, 16)
CALLS_PER_CELL = 192  # queries per measurement (a multiple of every size)


def numpy_top_k(vectors: np.ndarray, ids: np.ndarray, queries: np.ndarray, k: int) -> None:
    scores = queries @ vectors.T
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    values = np.take_along_axis(scores, part, 1)
    order = np.argsort(-values, axis=1, kind="stable")
    _ = np.take_along_axis(values, order, 1), ids[np.take_along_axis(part, order, 1)]


def variants(index: FaissIndex) -> dict[str, Callable[[np.ndarray], None]]:
    wrapper = faiss.downcast_index(index.faiss_index)
    flat = faiss.downcast_index(wrapper.index)
    vectors = faiss.rev_swig_ptr(flat.get_xb(), flat.ntotal * flat.d).reshape(flat.ntotal, -1)
    ids = faiss.vector_to_array(wrapper.id_map)

    def alone(queries: np.ndarray) -> None:
        for i in range(queries.shape[0]):
            index.search(queries[i : i + 1], K)

    def together(queries: np.ndarray) -> None:
        index.search(queries, K)

    return {
        "alone": alone,
        "scan": together,
        "blas": together,
        "blas-2t": together,
        "numpy": lambda queries: numpy_top_k(vectors, ids, queries, K),
    }


def settings(name: str) -> tuple[int, int]:
    """(BLAS threshold, ALONE_MAX_QUERIES) for a variant."""
    threshold = FAISS_DEFAULT_THRESHOLD if name == "scan" else SHARED_SCAN_MIN_FLOATS
    return threshold, (0 if name == "blas-2t" else faiss_threads.ALONE_MAX_QUERIES)


def measure(run: Callable[[np.ndarray], None], name: str, queries: np.ndarray, n: int) -> float:
    """CPU ms per query (whole process) over CALLS_PER_CELL queries in calls of `n`."""
    threshold, alone_max = settings(name)
    before = faiss.cvar.distance_compute_blas_threshold, faiss_threads.ALONE_MAX_QUERIES
    faiss.cvar.distance_compute_blas_threshold = threshold
    faiss_threads.ALONE_MAX_QUERIES = alone_max
    try:
        start = time.process_time()
        for first in range(0, CALLS_PER_CELL, n):
            rows = [(first + j) % queries.shape[0] for j in range(n)]
            run(queries[rows])
        return 1000 * (time.process_time() - start) / CALLS_PER_CELL
    finally:
        faiss.cvar.distance_compute_blas_threshold, faiss_threads.ALONE_MAX_QUERIES = before


def agreement(index: FaissIndex, queries: np.ndarray) -> dict[str, Any]:
    """Each query in blocks of 8 (BLAS) against itself alone (per-query scan)."""
    alone = [index.search(queries[i : i + 1], K) for i in range(queries.shape[0])]
    same_ids = 0
    worst = 0.0
    for first in range(0, queries.shape[0] - 7, 8):
        scores, ids = index.search(queries[first : first + 8], K)
        for j in range(8):
            same_ids += int(np.array_equal(ids[j], alone[first + j][1][0]))
            worst = max(worst, float(np.max(np.abs(scores[j] - alone[first + j][0][0]))))
    return {"queries": queries.shape[0] // 8 * 8, "identical_rankings": same_ids, "max_abs": worst}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dense-dir", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    dense_dir = args.dense_dir
    if dense_dir is None:
        data, _ = ensure_index(DEFAULT_DATASET, DEFAULT_CACHE, None)
        dense_dir = data / "tenants" / "default" / COLLECTION / "dense"
    loaded = FaissIndex.load(dense_dir)
    assert loaded is not None, f"no dense index under {dense_dir}"
    index = loaded[0]
    from core.embed.sentence_transformer_embedder import (
        SentenceTransformerEmbedder,
        default_model_path,
    )

    model = SentenceTransformerEmbedder(default_model_path(), "cpu")
    queries = np.asarray(model.embed_queries(load_questions(DEFAULT_DATASET)), dtype=np.float32)
    del model
    runs = variants(index)
    cells: dict[str, list[float]] = {}
    load_before = uptime()
    with threadpool_limits(1):  # NumPy's OpenBLAS: one thread (FAISS's own BLAS is separate)
        for round_ in range(args.rounds):
            for n in SIZES:
                names = list(runs)
                names = names[round_ % len(names) :] + names[: round_ % len(names)]
                for name in names:
                    cost = measure(runs[name], name, queries, n)
                    cells.setdefault(f"{name}/{n}", []).append(cost)
            print(f"round {round_ + 1}/{args.rounds} done", flush=True)
    record = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "faiss": faiss.__version__,
        "index": {"vectors": index.ntotal, "dimension": index.dimension, "dir": str(dense_dir)},
        "k": K,
        "rounds": args.rounds,
        "load_before": load_before,
        "load_after": uptime(),
        "cpu_ms_per_query": cells,
        "agreement": agreement(index, queries),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "dense_combined_raw.json").write_text(json.dumps(record, indent=2) + "\n")
    text = markdown(record, list(runs))
    (RESULTS / "dense_combined_raw.md").write_text(text)
    print(text)


def markdown(record: dict[str, Any], names: list[str]) -> str:
    cells = record["cpu_ms_per_query"]
    agree = record["agreement"]
    lines = [
        "# FAISS flat over python-faq: N queries per call vs N calls of one",
        "",
        f"{record['date']}, {record['machine']}, faiss {record['faiss']}; "
        f"{record['index']['vectors']} x {record['index']['dimension']} float32, top {record['k']}, "
        "the python-faq questions as queries. CPU ms per query of the whole process (all "
        f"threads): median of {record['rounds']} interleaved rounds [min-max].",
        "",
        f"- load before: `{record['load_before']}`",
        f"- load after: `{record['load_after']}`",
        "",
        "| N | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for n in SIZES:
        row = []
        for name in names:
            values = cells[f"{name}/{n}"]
            row.append(f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]")
        lines.append(f"| {n} | " + " | ".join(row) + " |")
    lines += [
        "",
        "alone: N calls of 1 query (one OpenMP thread); scan: one call of N, FAISS's per-query "
        "scan (default threshold); blas: one call of N through one sgemm per block of stored "
        "vectors (faiss_shared_scan), one thread; blas-2t: the same with 2 OpenMP threads; numpy: "
        "matmul + argpartition, one thread.",
        "",
        f"Rows of 8-query BLAS calls against the same query alone: {agree['identical_rankings']} "
        f"of {agree['queries']} rankings identical (top {record['k']} ids in order), largest "
        f"score difference {agree['max_abs']:.2e}.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
