"""How many queries each combined dense search takes under ghz load (#16): a histogram.

Run from the repository root (PYTHONPATH=$PWD:$PWD/clients/python in a worktree):

    python -m benchmarks.dense.combined_batches [--data-dir D] [--index-dir DIR]
        [--concurrency 8,32] [--connections 8] [--duration 10]

Serves the cached python-faq index (`benchmarks/ghz/faq_index`, or `--index-dir`, a data
directory it built) with this tree's `groundwire serve` (caches off, as benchmarks/ghz/run.py,
default processes) at log level DEBUG, where `core.dense.combined_search` logs every combined
call's size; drives Retrieve (dense, then default) with ghz at each concurrency and counts the
calls of each size from the log. DEBUG logging costs the server some CPU: the RPS printed here
are not the throughput numbers (benchmarks/ghz/runtimes.py measures those).
Writes results/dense_combined_batches.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.ghz.faq_index import DEFAULT_CACHE, DEFAULT_DATASET, ensure_index
from benchmarks.ghz.ghz_runs import GhzTools, Load, run_ghz
from benchmarks.ghz.ghz_tool import ensure_ghz, ensure_html_report
from benchmarks.ghz.machine import uptime
from benchmarks.ghz.request_files import WORKLOADS, load_questions, requests_for, write_data_file
from benchmarks.ghz.run import SERVER_ENV
from tests.serve_subprocess import ServeSubprocess

RESULTS = Path(__file__).resolve().parents[1] / "results"
COMBINED = re.compile(r"dense search of (\d+) queries combined")


def sizes_in(text: str) -> Counter[int]:
    return Counter(int(match.group(1)) for match in COMBINED.finditer(text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--index-dir", type=Path, default=None)
    parser.add_argument("--concurrency", default="8,32")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--duration", type=float, default=10.0)
    args = parser.parse_args()
    if args.index_dir is not None:
        index_dir = args.index_dir
        index = json.loads((index_dir / "READY.json").read_text())
    else:
        index_dir, index = ensure_index(DEFAULT_DATASET, args.data_dir, None)
    questions = load_questions(DEFAULT_DATASET)
    workloads = [w for w in WORKLOADS if w.name in ("retrieve-dense", "retrieve-default")]
    rows: list[dict[str, Any]] = []
    before = uptime()
    with tempfile.TemporaryDirectory(prefix="gw-combined-") as tmp:
        tools = GhzTools(
            ensure_ghz(args.data_dir), ensure_html_report(args.data_dir), Path(tmp) / "reports"
        )
        data = Path(tmp) / "data"
        shutil.copytree(index_dir, data)
        log = Path(tmp) / "server.log"
        env = {**SERVER_ENV, "GROUNDWIRE_LOG_LEVEL": "DEBUG"}
        server = ServeSubprocess.start(data, log, env, 900)
        try:
            for w in workloads:
                requests = requests_for(w, questions, str(index["collection"]))
                file = write_data_file(Path(tmp) / f"{w.name}.json", requests)
                for c in [int(c) for c in args.concurrency.split(",")]:
                    seen = sizes_in(server.log_text())
                    load = Load(c, min(args.connections, c), args.duration)
                    row = run_ghz(
                        tools, f"{w.name}-c{c}", server.target, w.call, file, load,
                        server.process.pid,
                    )  # fmt: skip
                    sizes = sizes_in(server.log_text()) - seen
                    calls = sum(sizes.values())
                    queries = sum(size * count for size, count in sizes.items())
                    rows.append(
                        {
                            "workload": w.name,
                            "c": c,
                            "rps_at_debug": row["ok_rps"],
                            "calls": calls,
                            "queries": queries,
                            "sizes": {str(s): sizes[s] for s in sorted(sizes)},
                        }
                    )
                    print(rows[-1], flush=True)
        finally:
            server.stop()
    record = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "connections": args.connections,
        "duration_s": args.duration,
        "load_before": before,
        "load_after": uptime(),
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "dense_combined_batches.json").write_text(json.dumps(record, indent=2) + "\n")
    text = markdown(record)
    (RESULTS / "dense_combined_batches.md").write_text(text)
    print(text)


def markdown(record: dict[str, Any]) -> str:
    largest = max((int(s) for r in record["rows"] for s in r["sizes"]), default=1)
    lines = [
        "# Queries per combined dense search under ghz load",
        "",
        f"{record['date']}; python-faq (19,551 chunks), caches off, log level DEBUG, "
        f"{record['connections']} connections, {record['duration_s']:g} s per run, default "
        "server processes. Calls of each size (queries taken by one FAISS call), all processes.",
        "",
        f"- load before: `{record['load_before']}`",
        f"- load after: `{record['load_after']}`",
        "",
        "| workload | c | RPS (at DEBUG) | calls | queries | queries/call | "
        + " | ".join(str(s) for s in range(1, largest + 1))
        + " |",
        "|---|---|---|---|---|---|" + "---|" * largest,
    ]
    for row in record["rows"]:
        mean = row["queries"] / row["calls"] if row["calls"] else 0.0
        counts = " | ".join(str(row["sizes"].get(str(s), 0)) for s in range(1, largest + 1))
        lines.append(
            f"| {row['workload']} | {row['c']} | {row['rps_at_debug']} | {row['calls']} | "
            f"{row['queries']} | {mean:.2f} | {counts} |"
        )
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
