"""Chroma (embedded, HTTP server) and LanceDB (vector, FTS, hybrid) beside groundwire (dense,
default) in one run: same corpus (python-faq unless --dataset), same MiniLM, top-k 10, text
queries, 1/8/32 client threads; QPS, p50/p99, Recall@10, MRR@10, ingest rate.

Run from the repository root: python -m benchmarks.peers.run [--quick] [--data-dir DIR]

The peers run in their own virtualenv (peers_venv.py; pinned in requirements.txt), driven by
peer_driver.py; groundwire runs as `groundwire serve` on the cached index of benchmarks/ghz
(caches off) and is driven over gRPC by the Python client with the same load_driver, and by ghz
with the same requests (ghz_load.py).
With `--rounds N` the whole comparison runs N times, groundwire first in odd rounds and the peers
first in even ones; the table gives medians over rounds and each system's QPS as a ratio to
`--reference`'s in the same round (rounds.py). groundwire's ingest probe runs in every round (a
fresh server each), the table gives each round's share of the raw model's rate and their median.
Writes results/NAME.{md,json} (`--name`; peers, or peers-quick with --quick).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.ghz.faq_index import (
    DEFAULT_CACHE,
    DEFAULT_DATASET,
    QUICK_SECTIONS,
    ensure_index,
    subset_ids,
)
from benchmarks.ghz.machine import machine_record, uptime
from benchmarks.peers.ghz_load import ghz_load, ghz_tools
from benchmarks.peers.groundwire_system import groundwire_ingest, groundwire_search
from benchmarks.peers.load_driver import load_qrels, load_queries, measure, quality
from benchmarks.peers.peers_table import markdown
from benchmarks.peers.peers_venv import ensure_venv
from benchmarks.peers.rounds import (
    fold_rounds,
    groundwire_steps,
    ingest_rounds,
    peer_order,
    ratios,
    system_name,
)
from tests.serve_subprocess import ServeSubprocess

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
HERE = Path(__file__).resolve().parent
SERVER_ENV = {"GROUNDWIRE_CACHE__ENABLED": "false"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SECTIONS} sections, 5 s")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_CACHE, help="cache root")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--venv", type=Path, help="peers' venv (default: DATA_DIR/peers-venv)")
    parser.add_argument("--threads", default="1,8,32")
    parser.add_argument("--duration", type=float, help="seconds per thread count (20; quick 5)")
    parser.add_argument("--ingest-docs", type=int, help="groundwire ingest probe (200; quick 40)")
    parser.add_argument("--peers", default="chroma-embedded,chroma-http,lancedb")
    parser.add_argument("--label", default="")
    parser.add_argument(
        "--name",
        help="results file name, without suffix (default: peers; peers-quick with --quick)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="whole comparisons, the order alternating (1)"
    )
    parser.add_argument(
        "--reference",
        default="chroma-embedded",
        help="the system the others' QPS is divided by, round by round",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=0,
        help="groundwire's server.processes (default 0: the server's default, one per core)",
    )
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def run_peers(
    args: argparse.Namespace,
    python: Path,
    ids: list[str],
    work: Path,
    duration: float,
    groundwire_first: bool = True,
) -> dict[str, Any]:
    """peer_driver.py in the peers' venv; its JSON. The systems run in `peer_order`: the
    reference's next to groundwire's side of the round."""
    systems = peer_order(args.peers.split(","), args.reference, groundwire_first)
    ids_file = work / "ids.json"
    ids_file.write_text(json.dumps(ids))
    out = work / "peers.json"
    (work / "peers").mkdir()
    command = [
        str(python),
        str(HERE / "peer_driver.py"),
        "--dataset",
        str(args.dataset),
        "--ids-file",
        str(ids_file),
        "--cache",
        str(args.data_dir / "peer-vectors"),
        "--work-dir",
        str(work / "peers"),
        "--out",
        str(out),
        "--threads",
        args.threads,
        "--duration",
        f"{duration:g}",
        "--systems",
        ",".join(systems),
    ]
    subprocess.run(command, check=True, cwd=ROOT)
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def run_groundwire(
    args: argparse.Namespace,
    index_dir: Path,
    collection: str,
    work: Path,
    duration: float,
    groundwire_first: bool = True,
) -> list[dict[str, Any]]:
    """groundwire serve on a copy of the cached index: the ingest probe, then dense and default
    Retrieve, each driven by the Python client and by ghz, in `groundwire_steps` order. Rows come
    back in the table's order: dense, dense (ghz), default, default (ghz)."""
    queries, qrels = load_queries(args.dataset), load_qrels(args.dataset)
    threads = [int(n) for n in args.threads.split(",")]
    data_dir = work / "groundwire"
    shutil.copytree(index_dir, data_dir)
    env = {**SERVER_ENV, "GROUNDWIRE_SERVER__PROCESSES": str(args.processes)}
    tools = ghz_tools(args.data_dir, work)
    server = ServeSubprocess.start(data_dir, work / "server.log", env, 600)
    pid = server.process.pid
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    metrics: dict[str, dict[str, Any]] = {}  # each mode's quality pass in this round
    try:
        ingest_docs = args.ingest_docs or (40 if args.quick else 200)
        ingest = groundwire_ingest(server.target, args.dataset, ingest_docs)
        for mode, driver in groundwire_steps(groundwire_first):
            system = system_name(mode, driver)
            print(f"measuring {system}", file=sys.stderr)
            with groundwire_search(server.target, collection, mode) as search:
                row: dict[str, Any] = {"system": system, "ingest": ingest}
                if driver == "python":
                    measured = measure(search, queries, qrels, threads, duration, pid)
                    row.update(measured)
                    metrics.setdefault(mode, {k: v for k, v in measured.items() if k != "load"})
                else:
                    if mode not in metrics:  # ghz before the Python row: a pass that also warms up
                        metrics[mode] = quality(search, queries, qrels)
                    row.update(metrics[mode])
                    row["load"] = ghz_load(
                        tools,
                        server.target,
                        args.dataset,
                        collection,
                        mode,
                        threads,
                        duration,
                        pid,
                    )
            rows[(mode, driver)] = row
            print(json.dumps(row), file=sys.stderr)
    finally:
        server.stop()
    return [rows[(mode, driver)] for mode in ("dense", "default") for driver in ("python", "ghz")]


def main() -> None:
    args = parse_args()
    name = args.name or ("peers-quick" if args.quick else "peers")
    duration = args.duration or (5.0 if args.quick else 20.0)
    sections = QUICK_SECTIONS if args.quick else None
    before = uptime()
    python = ensure_venv(args.venv or args.data_dir / "peers-venv")
    index_dir, index = ensure_index(args.dataset, args.data_dir, sections)
    ids = subset_ids(args.dataset, sections)
    started = time.monotonic()
    rounds: list[list[dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="gw-peers-") as tmp:
        for number in range(1, args.rounds + 1):
            work = Path(tmp) / f"round{number}"
            work.mkdir()
            print(f"round {number} of {args.rounds}", file=sys.stderr)
            first = number % 2 == 1  # groundwire first in odd rounds, the peers in even ones
            if not first:
                peers = run_peers(args, python, ids, work, duration, groundwire_first=False)
            groundwire = run_groundwire(
                args, index_dir, str(index["collection"]), work, duration, first
            )
            if first:
                peers = run_peers(args, python, ids, work, duration)
            rounds.append(groundwire + peers["peers"])
    record = {
        "label": args.label or ("quick (subset corpus, short runs)" if args.quick else "full"),
        "quick": args.quick,
        "dataset": args.dataset.name,
        "documents": len(ids),
        "queries": len(load_queries(args.dataset)),
        "groundwire_index": index,
        "duration_s_per_thread_count": duration,
        "groundwire_processes": args.processes,
        "elapsed_s": round(time.monotonic() - started, 1),
        "machine": machine_record(),
        "peer_versions": peers["versions"],
        "peer_embedding": peers["embedding"],
        "uptime_before": before,
        "uptime_after": uptime(),
        "rounds": len(rounds),
        "reference": args.reference,
        "systems": fold_rounds(rounds),
        "ratios": ratios(rounds, args.reference),
        "ingest_rounds": ingest_rounds(rounds),
        "round_rows": rounds if len(rounds) > 1 else [],
    }
    (RESULTS / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
    text = markdown(record)
    (RESULTS / f"{name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
