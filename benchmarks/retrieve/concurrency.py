"""Retrieve under concurrent load, one server process, server-side levers side by side in one run.

Run from the repository root: .venv/bin/python -m benchmarks.retrieve.concurrency
    [--sections N] [--duration S] [--concurrency 8 32] [--modes hybrid dense] [--profile]

Builds (once, cached under `batching/` of the benchmark cache: $GW_BENCH_CACHE, else
~/.cache/groundwire-bench) a data directory holding the first N python-faq sections (found as
`benchmarks/ghz/faq_index.py` finds them), indexed through a real server. Then, for every variant
(settings given as GROUNDWIRE_* environment variables; "before" is the pre-#16 path with
`server.await_query_embeddings = false`), it starts `groundwire serve` as its own process with both
caches off and the metrics endpoint on, and drives Retrieve (top 10, python-faq questions in turn)
from one grpc.aio client process at each concurrency. Per run: queries/s, p50/p99, the server's CPU
(cores busy, from /proc/<pid>/stat), the embedding batch-size histogram and the model's wall time
per query in its batch (from /metrics), beside the raw model's cost per query at the same batch
sizes measured in this process. `--profile` records a py-spy profile of each variant at the highest
concurrency and summarises where the server's samples go. Writes
results/retrieve_concurrency.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.ghz.faq_index import DEFAULT_CACHE, DEFAULT_DATASET
from benchmarks.gpu.grpc_load import COLLECTION, retrieve_load
from tests.serve_subprocess import ServeSubprocess

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
CACHE = DEFAULT_CACHE / "batching"
PY_SPY = Path(os.environ.get("PY_SPY", str(Path(sys.executable).with_name("py-spy"))))
METRICS = re.compile(r"metrics on http://([\d.]+):(\d+)/metrics")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

BASE_ENV = {
    "GROUNDWIRE_CACHE__ENABLED": "false",
    "GROUNDWIRE_METRICS__ENABLED": "true",
    "GROUNDWIRE_METRICS__PORT": "0",
}
SWITCH_INTERVAL = "GW_BENCH_SWITCH_INTERVAL_S"
"""Not a server setting: the benchmark sets the interpreter's GIL switch interval through a
sitecustomize module it writes for that server process."""
VARIANTS: dict[str, tuple[str, dict[str, str]]] = {
    "before": (
        "worker thread waits for its embedding (pre-#16)",
        {"GROUNDWIRE_SERVER__AWAIT_QUERY_EMBEDDINGS": "false"},
    ),
    "after": (
        "embedding awaited on the event loop",
        {"GROUNDWIRE_SERVER__AWAIT_QUERY_EMBEDDINGS": "true"},
    ),
    "after-w2": (
        "awaited, server.worker_threads=2 (fewer Python threads contend with the model's GIL)",
        {
            "GROUNDWIRE_SERVER__AWAIT_QUERY_EMBEDDINGS": "true",
            "GROUNDWIRE_SERVER__WORKER_THREADS": "2",
        },
    ),
    "after-switch1ms": (
        "awaited, sys.setswitchinterval(0.001) (the model thread gets the GIL back sooner)",
        {"GROUNDWIRE_SERVER__AWAIT_QUERY_EMBEDDINGS": "true", SWITCH_INTERVAL: "0.001"},
    ),
    "after-omp1": (
        "awaited, OMP_NUM_THREADS=1 (torch and FAISS one thread each)",
        {"GROUNDWIRE_SERVER__AWAIT_QUERY_EMBEDDINGS": "true", "OMP_NUM_THREADS": "1"},
    ),
}
RAW_BATCHES = (1, 4, 8, 16, 32)


def data_dir(sections: int) -> Path:
    """A data directory whose collection `bench` holds the first `sections` python-faq sections,
    indexed in-process with the server's collection defaults in batches (resumable: document
    vectors are cached on disk and re-sent documents are skipped by content hash)."""
    from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
    from core.catalog.collection_config import CollectionConfig
    from core.embed.cached_embedder import CachedEmbedder
    from core.embed.sentence_transformer_embedder import (
        SentenceTransformerEmbedder,
        default_model_path,
    )
    from core.eval.beir import load_beir
    from core.indexer import Indexer
    from core.models import Document, SourceType

    directory = CACHE / f"concurrency-{sections}" / "data"
    if (directory.parent / "READY").exists():
        return directory
    model = SentenceTransformerEmbedder(default_model_path(), "cpu")
    cached = CachedEmbedder(model, CACHE / "document_vectors.sqlite3")
    catalog = CollectionCatalog(directory)
    catalog.open_all()
    config = CollectionConfig(embedding_model=model.model_name, embedding_dim=model.dimension)
    collection = catalog.get_or_create(DEFAULT_TENANT, COLLECTION, config)
    indexer = Indexer(cached, config.chunk_max_tokens, max_document_bytes=1 << 30)
    corpus = list(load_beir(DEFAULT_DATASET).corpus.values())[:sections]
    documents = [Document(d.doc_id, d.text, SourceType.TEXT, title=d.title) for d in corpus]
    for start in range(0, len(documents), 32):
        indexer.index(collection, documents[start : start + 32])
        print(f"indexed {start + 32} of {len(documents)} sections", flush=True)
    collection.checkpoint()
    catalog.close()
    (directory.parent / "READY").write_text(str(sections))
    return directory


def queries() -> list[str]:
    """The python-faq questions."""
    lines = (DEFAULT_DATASET / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines if line.strip()]


def raw_model_costs(texts: list[str], repeats: int = 2) -> dict[int, float]:
    """Milliseconds per query of the bare model (no server) at each batch size in RAW_BATCHES."""
    from core.embed.sentence_transformer_embedder import (
        SentenceTransformerEmbedder,
        default_model_path,
    )

    model = SentenceTransformerEmbedder(default_model_path(), "cpu")
    model.embed_queries(texts[:8])
    costs: dict[int, float] = {}
    for size in RAW_BATCHES:
        best = float("inf")
        for repeat in range(repeats):
            batch = [texts[(repeat * size + i) % len(texts)] for i in range(size)]
            started = time.perf_counter()
            for _ in range(max(1, 32 // size)):
                model.embed_queries(batch)
            elapsed = time.perf_counter() - started
            best = min(best, elapsed / (max(1, 32 // size) * size))
        costs[size] = round(best * 1000.0, 2)
    return costs


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the process so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def scrape(address: str) -> dict[str, float]:
    """The embedding batcher's series from /metrics: bucket counts, sum, count, busy seconds."""
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("groundwire_embed_batch_s"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def batch_figures(before: dict[str, float], after: dict[str, float]) -> dict[str, Any]:
    """Batches, texts, mean size, size histogram and model ms per text between two scrapes."""
    delta = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
    batches = delta.get("groundwire_embed_batch_size_count", 0.0)
    texts = delta.get("groundwire_embed_batch_size_sum", 0.0)
    busy = delta.get("groundwire_embed_batch_seconds_total", 0.0)
    buckets = sorted(
        (float(re.search(r'le="([^"]+)"', k).group(1)), v)  # type: ignore[union-attr]
        for k, v in delta.items()
        if k.startswith("groundwire_embed_batch_size_bucket")
    )
    histogram: dict[str, int] = {}
    below = 0.0
    lower = 0.0
    for bound, cumulative in buckets:
        if cumulative - below:
            label = "+Inf" if bound == float("inf") else f"{int(lower) + 1}-{int(bound)}"
            histogram[label] = int(cumulative - below)
        below, lower = cumulative, bound
    return {
        "batches": int(batches),
        "mean_batch": round(texts / batches, 2) if batches else 0.0,
        "batch_histogram": histogram,
        "model_ms/query": round(1000.0 * busy / texts, 2) if texts else 0.0,
    }


def start_server(data: Path, variant_env: dict[str, str], log: Path) -> tuple[ServeSubprocess, str]:
    """The server on a copy-free data directory (Retrieve never writes) and its metrics address."""
    env = {**BASE_ENV, **variant_env}
    if SWITCH_INTERVAL in env:
        site = log.parent / "site"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(
            f"import sys\nsys.setswitchinterval({float(env.pop(SWITCH_INTERVAL))})\n"
        )
        env["PYTHONPATH"] = f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    server = ServeSubprocess.start(data, log, env=env, timeout_s=600)
    match = METRICS.search(server.log_text())
    if match is None:
        server.stop()
        raise RuntimeError(f"no metrics address in the server log:\n{server.log_text()}")
    return server, f"{match.group(1)}:{match.group(2)}"


def measure(
    server: ServeSubprocess, metrics: str, texts: list[str], mode: str, concurrency: int, s: float
) -> dict[str, Any]:
    """One load run; the client's figures plus server cores busy and batching."""
    pid = server.process.pid
    scraped = scrape(metrics)
    cpu, wall = cpu_seconds(pid), time.monotonic()
    row = retrieve_load(server.target, texts, mode, concurrency, 1, s)
    cores = (cpu_seconds(pid) - cpu) / (time.monotonic() - wall)
    row.update(batch_figures(scraped, scrape(metrics)))
    row["server_cores"] = round(cores, 2)
    row["server_cpu_ms/query"] = (
        round(1000.0 * cores / row["queries/s"], 2) if row.get("queries/s") else None
    )
    row["load_avg"] = os.getloadavg()[0]
    return row


def profile(server: ServeSubprocess, texts: list[str], mode: str, c: int, s: float) -> Any:
    """A py-spy profile (raw collapsed stacks) of the server under load, summarised."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "stacks.txt"
        spy = subprocess.Popen(
            [str(PY_SPY), "record", "--pid", str(server.process.pid), "--duration", str(int(s))]
            + ["--rate", "50", "--nonblocking", "--format", "raw", "--output", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        retrieve_load(server.target, texts, mode, c, 1, s)
        spy.wait(timeout=s + 60)
        return summarise_stacks(out.read_text() if out.exists() else "")


CATEGORIES = (
    ("model forward (batcher thread)", ("_embed_chunked", "_embed_tensor")),
    ("dense search (FAISS)", ("dense_search",)),
    ("lexical search (Tantivy)", ("lexical_search",)),
    ("store reads (chunks)", ("get_chunks",)),
    ("context assembly", ("assemble_context",)),
    ("other pipeline stages", ("pipeline.py",)),
    ("gRPC edge, conversions, asyncio", ("",)),
)


def summarise_stacks(raw: str) -> dict[str, Any]:
    """Share of active samples per category (first match in CATEGORIES) and top leaf frames."""
    shares: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        for name, needles in CATEGORIES:
            if any(needle in stack for needle in needles):
                shares[name] += count
                break
        leaves[stack.rsplit(";", 1)[-1]] += count
    if not total:
        return {"samples": 0}
    return {
        "samples": total,
        "shares_%": {k: round(100.0 * v / total, 1) for k, v in shares.most_common()},
        "top_leaves_%": {k: round(100.0 * v / total, 1) for k, v in leaves.most_common(8)},
    }


def markdown(report: dict[str, Any]) -> str:
    """The results as Markdown tables."""
    lines = [
        "# Retrieve under concurrency (one server process)",
        "",
        f"{report['date']}, {report['machine']}; python-faq, first {report['sections']} sections;",
        "caches off; top 10; one grpc.aio client process; "
        f"{report['duration_s']} s per run. `python -m benchmarks.retrieve.concurrency`",
        "",
        "Raw model, ms per query at batch size (this process, no server): "
        + ", ".join(f"{size}: {ms}" for size, ms in report["raw_model_ms"].items()),
        "",
        "Variants: " + "; ".join(f"**{k}**: {v[0]}" for k, v in VARIANTS.items()),
        "",
        "| variant | mode | c | round | queries/s | p50 ms | p99 ms | errors | server cores | "
        "server CPU ms/query | batch mean | batch sizes | model ms/query | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in report["runs"]:
        sizes = " ".join(f"{k}:{v}" for k, v in row["batch_histogram"].items())
        lines.append(
            f"| {row['variant']} | {row['mode']} | {row['concurrency']} | {row['round']} "
            f"| {row.get('queries/s')} | {row.get('p50_ms')} | {row.get('p99_ms')} | {row['errors']} "
            f"| {row['server_cores']} | {row['server_cpu_ms/query']} | {row['mean_batch']} "
            f"| {sizes} | {row['model_ms/query']} "
            f"| {row['load_avg']:.1f} |"
        )
    for variant, summary in report.get("profiles", {}).items():
        lines += ["", f"## py-spy: {variant} ({summary.get('samples', 0)} active samples)", ""]
        lines += ["| where | % of samples |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in summary.get("shares_%", {}).items()]
        lines += ["", "| top leaf frames | % |", "|---|---|"]
        lines += [f"| `{k}` | {v} |" for k, v in summary.get("top_leaves_%", {}).items()]
    return "\n".join(lines) + "\n"


def run_interleaved(
    data: Path, texts: list[str], args: argparse.Namespace
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every variant's server up at once; runs interleaved (variant after variant, `--rounds`
    times per setting) so the machine's varying load falls on all of them alike."""
    servers: dict[str, tuple[ServeSubprocess, str]] = {}
    runs: list[dict[str, Any]] = []
    profiles: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for variant in args.variants:
                log = Path(tmp) / f"{variant}.log"
                servers[variant] = start_server(data, VARIANTS[variant][1], log)
            for mode in args.modes:
                for concurrency in args.concurrency:
                    for round_ in range(1, args.rounds + 1):
                        for variant, (server, metrics) in servers.items():
                            row = measure(server, metrics, texts, mode, concurrency, args.duration)
                            row.update(variant=variant, round=round_)
                            print(json.dumps(row), flush=True)
                            runs.append(row)
            if args.profile:
                top = max(args.concurrency)
                for variant, (server, _) in servers.items():
                    summary = profile(server, texts, args.modes[0], top, args.duration)
                    profiles[f"{variant}, {args.modes[0]}, c={top}"] = summary
                    print(json.dumps(summary), flush=True)
        finally:
            for server, _ in servers.values():
                server.stop()
    return runs, profiles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sections", type=int, default=1000)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--modes", nargs="+", default=["hybrid", "dense"])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-raw", dest="raw", action="store_false", help="skip the bare model")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--tag", default="", help="suffix of the result file names")
    args = parser.parse_args()
    data = data_dir(args.sections)
    texts = queries()
    report: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "sections": args.sections,
        "duration_s": args.duration,
        "raw_model_ms": raw_model_costs(texts) if args.raw else {},
        "runs": [],
        "profiles": {},
    }
    print("raw model ms/query by batch size:", report["raw_model_ms"], flush=True)
    report["runs"], report["profiles"] = run_interleaved(data, texts, args)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = "retrieve_concurrency" + (f"-{args.tag}" if args.tag else "")
    (RESULTS / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / f"{stem}.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
