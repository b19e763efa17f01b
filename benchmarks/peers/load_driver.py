"""The driver every system gets, peers and groundwire alike (standard library only, so it runs in
both virtualenvs): a quality pass over every query, then N client threads cycling the queries.

A system is a function from query text to ranked document ids; it embeds the text itself.
"""

from __future__ import annotations

import json
import math
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Search = Callable[[str], Sequence[str]]
K = 10


def load_queries(dataset: Path) -> dict[str, str]:
    """query id -> text, file order."""
    with (dataset / "queries.jsonl").open(encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    return {r["_id"]: r["text"] for r in records}


def load_qrels(dataset: Path) -> dict[str, set[str]]:
    """query id -> relevant document ids (score > 0)."""
    qrels: dict[str, set[str]] = {}
    with (dataset / "qrels" / "test.tsv").open(encoding="utf-8") as rows:
        for row in rows:
            parts = row.rstrip("\n").split("\t")
            if len(parts) < 3 or parts[0] == "query-id" or int(parts[2]) <= 0:
                continue
            qrels.setdefault(parts[0], set()).add(parts[1])
    return qrels


def recall_mrr(
    run: dict[str, Sequence[str]], qrels: dict[str, set[str]], k: int = K
) -> dict[str, float]:
    """Recall@k and MRR@k averaged over the judged queries (a missing ranking scores 0)."""
    recalls, reciprocal = [], []
    for query_id, relevant in qrels.items():
        ranked = list(run.get(query_id, ()))[:k]
        recalls.append(len(relevant.intersection(ranked)) / len(relevant))
        rank = next((i for i, doc in enumerate(ranked, 1) if doc in relevant), 0)
        reciprocal.append(1.0 / rank if rank else 0.0)
    return {
        f"recall@{k}": round(statistics.fmean(recalls), 4),
        f"mrr@{k}": round(statistics.fmean(reciprocal), 4),
    }


def quality(search: Search, queries: dict[str, str], qrels: dict[str, set[str]]) -> dict[str, Any]:
    """Every query once, in order, one thread: the metrics and the mean documents returned."""
    run = {query_id: list(search(text))[:K] for query_id, text in queries.items()}
    returned = statistics.fmean(len(docs) for docs in run.values())
    return {**recall_mrr(run, qrels), "docs_returned_mean": round(returned, 2)}


def percentile(sorted_ms: Sequence[float], share: float) -> float:
    """Nearest-rank percentile of ascending values."""
    index = max(0, min(len(sorted_ms) - 1, math.ceil(share * len(sorted_ms)) - 1))
    return sorted_ms[index]


def throughput(
    search: Search, texts: Sequence[str], threads: int, duration_s: float
) -> dict[str, Any]:
    """`threads` clients, each cycling `texts` from its own offset, for `duration_s`: QPS of the
    successful calls finished in time, their p50/p99 latency, errors (a failing call ends
    nothing and is not timed) and the cores this process kept busy."""
    latencies: list[list[float]] = [[] for _ in range(threads)]
    errors = [0] * threads
    start = threading.Barrier(threads + 1)
    deadline = [0.0]

    def client(slot: int) -> None:
        position = slot * len(texts) // threads
        start.wait()
        while True:
            began = time.perf_counter()
            if began >= deadline[0]:
                return
            position += 1
            try:
                search(texts[(position - 1) % len(texts)])
            except Exception:  # noqa: BLE001 - counted, the load goes on
                errors[slot] += 1
                continue
            finished = time.perf_counter()
            if finished <= deadline[0]:
                latencies[slot].append((finished - began) * 1000.0)

    workers = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    deadline[0] = time.perf_counter() + duration_s
    began, cpu_began = time.perf_counter(), time.process_time()
    start.wait()
    for worker in workers:
        worker.join()
    wall = max(time.perf_counter() - began, 1e-9)
    cpu = time.process_time() - cpu_began
    done = sorted(ms for per_thread in latencies for ms in per_thread)
    return {
        "threads": threads,
        "calls": len(done),
        "errors": sum(errors),
        "qps": round(len(done) / min(wall, duration_s), 2),
        "p50_ms": round(percentile(done, 0.50), 1) if done else None,
        "p99_ms": round(percentile(done, 0.99), 1) if done else None,
        # this process's CPU: the client side for a server, the whole system for an embedded one
        "driver_cores_busy": round(cpu / wall, 2),
    }


def measure(
    search: Search,
    queries: dict[str, str],
    qrels: dict[str, set[str]],
    threads: Sequence[int],
    duration_s: float,
    server_pid: int | None = None,
) -> dict[str, Any]:
    """The quality pass (doubles as warm-up), then one throughput run per thread count; with
    `server_pid`, each run also reports the cores that server's process tree kept busy."""
    result = quality(search, queries, qrels)
    texts = list(queries.values())
    result["load"] = []
    if server_pid is not None:  # the groundwire side only: the peers' venv lacks `benchmarks`
        from benchmarks.ghz.cores_busy import cores_busy, sample
    for n in threads:
        before = None if server_pid is None else sample(server_pid)
        load = throughput(search, texts, n, duration_s)
        if server_pid is not None and before is not None:
            load["server_cores_busy"] = round(cores_busy(before, sample(server_pid)), 2)
        result["load"].append(load)
    return result
