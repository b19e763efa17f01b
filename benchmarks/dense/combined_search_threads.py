"""`Collection.dense_search` from T threads at once, combined vs alone, in process (#16).

Run from the repository root (PYTHONPATH=$PWD:$PWD/clients/python in a worktree):

    python -m benchmarks.dense.combined_search_threads --index-dir DIR [--rounds 3]

`--index-dir`: a data directory holding the python-faq collection (`benchmarks/ghz/faq_index`
builds one; copied to a scratch directory first). The 172 questions embedded by the packaged
MiniLM; top 50. T threads (1, 8, 32) each search their share of 384 queries back to back, as
the server's search workers would with nothing else to do: the upper bound of what combining
gives. *alone*: the collection's combiner capped at 1 query (every search alone under the lock:
the code before combining); *combined*: the default cap. Rounds interleaved; CPU ms per query
of the whole process, wall ms per query, and the calls of each size. Writes
results/dense_combined_threads.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.ghz.faq_index import COLLECTION, DEFAULT_DATASET
from benchmarks.ghz.machine import uptime
from benchmarks.ghz.request_files import load_questions
from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection import Collection
from core.dense.combined_search import SearchCombiner

RESULTS = Path(__file__).resolve().parents[1] / "results"
THREADS = (1, 8, 32)
QUERIES = 384
K = 50


def one_cell(collection: Collection, queries: np.ndarray, threads: int) -> tuple[float, float]:
    """(CPU ms, wall ms) per query: `threads` threads searching QUERIES queries in all."""
    share = QUERIES // threads
    start = threading.Barrier(threads + 1)

    def work(offset: int) -> None:
        start.wait()
        for step in range(share):
            row = (offset * share + step) % queries.shape[0]
            collection.dense_search(queries[row : row + 1], K)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    cpu, wall = time.process_time(), time.perf_counter()
    start.wait()
    for worker in workers:
        worker.join()
    done = share * threads
    return 1000 * (time.process_time() - cpu) / done, 1000 * (time.perf_counter() - wall) / done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from core.embed.sentence_transformer_embedder import (
        SentenceTransformerEmbedder,
        default_model_path,
    )

    model = SentenceTransformerEmbedder(default_model_path(), "cpu")
    queries = np.asarray(model.embed_queries(load_questions(DEFAULT_DATASET)), dtype=np.float32)
    del model
    scratch = Path(tempfile.mkdtemp(prefix="gw-combined-threads-"))
    try:
        shutil.copytree(args.index_dir, scratch / "data")
        catalog = CollectionCatalog(scratch / "data")
        catalog.open_all()
        collection = catalog.get(DEFAULT_TENANT, COLLECTION)
        combiners = {
            "alone": SearchCombiner(collection._dense_lock, collection._search_rows, 1),
            "combined": collection._combined,
        }
        cpu: dict[str, list[float]] = {}
        wall: dict[str, list[float]] = {}
        sizes: dict[str, Counter[int]] = {}
        before = uptime()
        for round_ in range(args.rounds):
            for threads in THREADS:
                order = list(combiners) if round_ % 2 == 0 else list(combiners)[::-1]
                for name in order:
                    combiner = combiners[name]
                    collection._combined = combiner
                    seen = Counter(combiner.sizes)
                    cell = f"{name}/{threads}"
                    cpu_ms, wall_ms = one_cell(collection, queries, threads)
                    cpu.setdefault(cell, []).append(cpu_ms)
                    wall.setdefault(cell, []).append(wall_ms)
                    sizes.setdefault(cell, Counter()).update(combiner.sizes - seen)
            print(f"round {round_ + 1}/{args.rounds} done", flush=True)
        collection._combined = combiners["combined"]
        catalog.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    record = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "rounds": args.rounds,
        "queries_per_cell": QUERIES,
        "k": K,
        "load_before": before,
        "load_after": uptime(),
        "cpu_ms_per_query": cpu,
        "wall_ms_per_query": wall,
        "sizes": {cell: {str(s): n for s, n in sorted(c.items())} for cell, c in sizes.items()},
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "dense_combined_threads.json").write_text(json.dumps(record, indent=2) + "\n")
    text = markdown(record)
    (RESULTS / "dense_combined_threads.md").write_text(text)
    print(text)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"


def markdown(record: dict[str, Any]) -> str:
    lines = [
        "# Collection.dense_search from T threads: combined vs alone (in process)",
        "",
        f"{record['date']}; python-faq (19,551 x 384, flat), top {record['k']}, "
        f"{record['queries_per_cell']} queries per cell, median of {record['rounds']} "
        "interleaved rounds [min-max]. Threads search back to back (no model, no gRPC): the "
        "upper bound of what combining gives.",
        "",
        f"- load before: `{record['load_before']}`",
        f"- load after: `{record['load_after']}`",
        "",
        "| T | variant | CPU ms/query | wall ms/query | queries/call | calls by size |",
        "|---|---|---|---|---|---|",
    ]
    for threads in THREADS:
        for name in ("alone", "combined"):
            cell = f"{name}/{threads}"
            counts = {int(s): n for s, n in record["sizes"][cell].items()}
            calls = sum(counts.values())
            mean = sum(s * n for s, n in counts.items()) / calls if calls else 0.0
            histogram = ", ".join(f"{s}: {n}" for s, n in sorted(counts.items()))
            lines.append(
                f"| {threads} | {name} | {spread(record['cpu_ms_per_query'][cell])} | "
                f"{spread(record['wall_ms_per_query'][cell])} | {mean:.2f} | {histogram} |"
            )
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
