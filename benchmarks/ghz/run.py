"""ghz against `groundwire serve` on python-faq: Retrieve (dense, default) and Answer (extractive)
at 1/8/32 concurrent calls over 1 and 4 connections, then a fixed-rate run near saturation.

Run from the repository root: python -m benchmarks.ghz.run [--quick] [--data-dir DIR]

Caches off (every call embeds and searches), text queries cycling the 172 python-faq questions.
Writes ghz JSON and HTML reports to results/ghz/ (results/ghz-quick/ with --quick) and the summary
(RPS, p50/p95/p99, errors, server cores busy) to results/ghz_summary{,-quick}.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.ghz.faq_index import DEFAULT_CACHE, DEFAULT_DATASET, QUICK_SECTIONS, ensure_index
from benchmarks.ghz.ghz_runs import ROOT, GhzTools, Load, run_ghz
from benchmarks.ghz.ghz_tool import GHZ_VERSION, ensure_ghz, ensure_html_report
from benchmarks.ghz.machine import machine_record, uptime
from benchmarks.ghz.request_files import (
    ANSWER,
    WORKLOADS,
    Workload,
    load_questions,
    requests_for,
    write_data_file,
)
from benchmarks.ghz.summary_table import markdown
from tests.serve_subprocess import ServeSubprocess

RESULTS = ROOT / "benchmarks" / "results"
SERVER_ENV = {
    "GROUNDWIRE_CACHE__ENABLED": "false",  # every call embeds and searches
    "GROUNDWIRE_GENERATOR__KIND": "extractive",
}
SATURATION_SHARE = 0.9
"""The fixed-rate run asks for this share of the best RPS measured for its workload."""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="subset corpus, short runs")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_CACHE, help="index/ghz cache")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--duration", type=float, help="seconds per Retrieve run (30; quick 5)")
    parser.add_argument("--answer-duration", type=float, help="seconds per Answer run (60; 10)")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--connections", default="1,4")
    parser.add_argument("--workloads", default=",".join(w.name for w in WORKLOADS))
    parser.add_argument("--api-key", default="", help="sent as 'authorization: Bearer KEY'")
    parser.add_argument("--label", default="", help="a note stored with the results")
    parser.add_argument(
        "--processes",
        type=int,
        default=0,
        help="server.processes of the server (one connection lands on one process, which hands "
        "calls to the others: server.balance_reads); default 0, the server's own: one per core "
        "(results before this default used 1)",
    )
    parser.add_argument("--keep-details", action="store_true", help="keep per-call details")
    return parser.parse_args()


def durations(args: argparse.Namespace, workload: Workload) -> float:
    """Seconds per run of `workload`."""
    if workload.name.startswith("answer"):
        return args.answer_duration or (10.0 if args.quick else 60.0)
    return args.duration or (5.0 if args.quick else 30.0)


def run_workload(
    args: argparse.Namespace,
    tools: GhzTools,
    server: ServeSubprocess,
    workload: Workload,
    data_file: Path,
) -> list[dict[str, Any]]:
    """Warm-up, the concurrency x connections grid, then the fixed-rate run."""
    metadata = {"authorization": f"Bearer {args.api_key}"} if args.api_key else None
    pid = server.process.pid
    seconds = durations(args, workload)
    stop = "wait" if workload.call == ANSWER else "ignore"
    concurrency = [int(c) for c in args.concurrency.split(",")]
    connections = [int(k) for k in args.connections.split(",")]
    warm = Load(concurrency=2, connections=1, duration_s=min(seconds, 5.0), stop=stop)
    scratch = replace(tools, reports=data_file.parent / "warmup")
    run_ghz(scratch, workload.name, server.target, workload.call, data_file, warm, pid, metadata)
    rows = []
    for k in connections:
        for c in concurrency:
            if c < k:
                continue  # ghz spreads workers over connections: needs c >= connections
            load = Load(concurrency=c, connections=k, duration_s=seconds, stop=stop)
            name = f"{workload.name}-c{c}-k{k}"
            row = run_ghz(tools, name, server.target, workload.call, data_file, load, pid, metadata)
            rows.append({"workload": workload.name, **row})
            print(markdown([rows[-1]], header=False), file=sys.stderr)
    best = max(row["ok_rps"] for row in rows)
    rate = max(1, round(best * SATURATION_SHARE))
    fixed = Load(max(concurrency), max(connections), seconds, rps=rate, stop=stop)
    name = f"{workload.name}-rps{rate}"
    row = run_ghz(tools, name, server.target, workload.call, data_file, fixed, pid, metadata)
    rows.append({"workload": workload.name, **row})
    return rows


def main() -> None:
    args = parse_args()
    suffix = "-quick" if args.quick else ""
    started_uptime = uptime()
    tools = GhzTools(
        ghz=ensure_ghz(args.data_dir),
        html_report=ensure_html_report(args.data_dir),
        reports=RESULTS / f"ghz{suffix}",
        keep_details=args.keep_details,
    )
    if tools.reports.exists():
        shutil.rmtree(tools.reports)
    index_dir, index = ensure_index(
        args.dataset, args.data_dir, QUICK_SECTIONS if args.quick else None
    )
    questions = load_questions(args.dataset)
    wanted = args.workloads.split(",")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="gw-ghz-") as tmp:
        data_dir = Path(tmp) / "data"
        shutil.copytree(index_dir, data_dir)  # the server never writes into the cache
        env = {**SERVER_ENV, "GROUNDWIRE_SERVER__PROCESSES": str(args.processes)}
        server = ServeSubprocess.start(data_dir, Path(tmp) / "server.log", env, 600)
        try:
            for workload in WORKLOADS:
                if workload.name not in wanted:
                    continue
                requests = requests_for(workload, questions, str(index["collection"]))
                data_file = write_data_file(Path(tmp) / f"{workload.name}.json", requests)
                rows += run_workload(args, tools, server, workload, data_file)
        finally:
            server.stop()
    record = {
        "label": args.label or ("quick (subset corpus, short runs)" if args.quick else "full"),
        "quick": args.quick,
        "ghz": f"github.com/bojand/ghz {GHZ_VERSION}",
        "corpus": {
            "dataset": str(args.dataset),
            "documents": index["documents"],
            "chunks": index["chunks"],
            "sections": "all" if not args.quick else QUICK_SECTIONS,
            "index_key": index.get("key"),
        },
        "queries": len(questions),
        "server_env": {**SERVER_ENV, "GROUNDWIRE_SERVER__PROCESSES": str(args.processes)},
        "machine": machine_record(),
        "uptime_before": started_uptime,
        "uptime_after": uptime(),
        "rows": rows,
    }
    (RESULTS / f"ghz_summary{suffix}.json").write_text(json.dumps(record, indent=2) + "\n")
    text = markdown(rows, record=record)
    (RESULTS / f"ghz_summary{suffix}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
