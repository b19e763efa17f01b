"""Which threads of a served Retrieve burn the CPU: per-thread CPU per call under ghz load.

Run from the repository root:
    python -m benchmarks.ghz.thread_cpu [--mode default] [--concurrency 8] [--duration 20]
        [--rounds 2] [--label NAME] [--env KEY=VALUE ...]

Starts one server on the cached whole python-faq index (as `served_profile.py`: caches off,
`server.processes` 1), warms it, then runs ghz Retrieve at `--concurrency` clients while reading
/proc/<pid>/task/*/stat before and after a window of `--duration` seconds: each thread's user and
system CPU over the window, per completed call. Threads are named by py-spy's dump when py-spy is
installed beside the interpreter (`pip install py-spy`; Python's
thread names: the event loop's MainThread, gw-work_*, gw-lexical_*, query-micro-batcher) or by
their kernel name (grpc's event_engine; unnamed native threads such as the dense-search
combiner's show as "python"). py-spy's samples count threads waiting for the GIL as busy; the
kernel's counters do not. Writes results/thread_cpu-<label>.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.ghz.faq_index import DEFAULT_CACHE, DEFAULT_DATASET, ensure_index
from benchmarks.ghz.ghz_runs import Load, ghz_command
from benchmarks.ghz.ghz_tool import ensure_ghz
from benchmarks.ghz.machine import uptime
from benchmarks.ghz.request_files import WORKLOADS, load_questions, requests_for, write_data_file
from benchmarks.ghz.run import RESULTS, SERVER_ENV
from tests.serve_subprocess import ServeSubprocess

PY_SPY = Path(sys.executable).parent / "py-spy"
DUMP_THREAD = re.compile(r'Thread (\d+) \(\w+\): "([^"]*)"')
GROUPS = (("gw-work_", "worker pool (gw-work)"), ("gw-lexical_", "lexical pool (gw-lexical)"))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_CACHE, help="index/ghz cache")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--mode", choices=("default", "dense"), default="default")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds measured")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--label", default="main", help="results/thread_cpu-<label>.*")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the server")
    return parser.parse_args()


def thread_cpu(pid: int) -> dict[int, tuple[str, float, float]]:
    """Kernel name, user and system CPU seconds of every thread of `pid` so far."""
    tick = os.sysconf("SC_CLK_TCK")
    found: dict[int, tuple[str, float, float]] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        found[int(tid)] = (name, int(fields[11]) / tick, int(fields[12]) / tick)
    return found


def python_names(pid: int) -> dict[int, str]:
    """Thread id -> Python thread name, from py-spy's dump (empty without py-spy)."""
    if not PY_SPY.exists():
        return {}
    dump = subprocess.run(
        [str(PY_SPY), "dump", "--pid", str(pid)], capture_output=True, text=True, check=False
    ).stdout
    return {int(tid): name for tid, name in DUMP_THREAD.findall(dump)}


def group_of(name: str) -> str:
    for prefix, group in GROUPS:
        if name.startswith(prefix):
            return group
    return name


def one_round(args: argparse.Namespace, ghz: Path, index_dir: Path, data: Path) -> dict[str, Any]:
    """One server, warmed, measured once under load."""
    env = {**SERVER_ENV, **dict(item.split("=", 1) for item in args.env)}
    workload = next(w for w in WORKLOADS if w.name == f"retrieve-{args.mode}")
    with tempfile.TemporaryDirectory(prefix="gw-thread-cpu-") as tmp:
        work = Path(tmp)
        shutil.copytree(index_dir, work / "data")
        server = ServeSubprocess.start(work / "data", work / "server.log", env, 900)
        try:
            pid = server.process.pid
            warm = ghz_command(ghz, server.target, workload.call, data, Load(8, 1, 4), work / "w")
            subprocess.run(warm, check=True, capture_output=True)
            load = Load(args.concurrency, 1, args.duration + 4)
            report = work / "run.json"
            run = subprocess.Popen(
                ghz_command(ghz, server.target, workload.call, data, load, report)
            )
            time.sleep(2)
            names = python_names(pid)
            before, started = thread_cpu(pid), time.monotonic()
            time.sleep(args.duration)
            after, wall = thread_cpu(pid), time.monotonic() - started
            names |= python_names(pid)
            run.wait()
            rps = float(json.loads(report.read_text())["rps"])
        finally:
            server.stop()
    calls = rps * wall
    groups: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for tid, (kernel_name, user, system) in after.items():
        _, user0, system0 = before.get(tid, (kernel_name, 0.0, 0.0))
        entry = groups[group_of(names.get(tid, kernel_name))]
        entry[0] += user - user0
        entry[1] += system - system0
        entry[2] += 1
    rows: list[dict[str, Any]] = [
        {
            "threads": name,
            "count": int(count),
            "cores": round((user + system) / wall, 3),
            "ms_per_call": round((user + system) / calls * 1000.0, 3),
            "system_ms_per_call": round(system / calls * 1000.0, 3),
        }
        for name, (user, system, count) in groups.items()
        if user + system > 0
    ]
    rows.sort(key=lambda row: -row["ms_per_call"])
    total = sum(row["ms_per_call"] for row in rows)
    return {"rps": round(rps, 1), "ms_per_call": round(total, 2), "threads": rows}


def markdown(record: dict[str, Any]) -> str:
    lines = [
        f"# Per-thread CPU of a served Retrieve {record['mode']} at {record['concurrency']} "
        f"clients: {record['label']}",
        "",
        f"`python -m benchmarks.ghz.thread_cpu`, whole python-faq ({record['chunks']} chunks), "
        f"caches off, one server process, ghz on one connection; server env "
        f"{record['env'] or 'as the harness'}. Load before: `{record['uptime_before']}`, after: "
        f"`{record['uptime_after']}`.",
        "",
    ]
    for number, found in enumerate(record["rounds"], start=1):
        lines += [
            f"Round {number}: {found['rps']} calls/s, **{found['ms_per_call']} ms of server CPU "
            "per call**.",
            "",
            "| threads | count | cores busy | ms CPU / call | of which system |",
            "|---|---:|---:|---:|---:|",
            *(
                f"| {row['threads']} | {row['count']} | {row['cores']:.2f} "
                f"| {row['ms_per_call']:.2f} | {row['system_ms_per_call']:.2f} |"
                for row in found["threads"]
                if row["ms_per_call"] >= 0.01
            ),
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    args = parse_args()
    index_dir, index = ensure_index(args.dataset, args.data_dir, None)
    ghz = ensure_ghz(args.data_dir)
    workload = next(w for w in WORKLOADS if w.name == f"retrieve-{args.mode}")
    questions = load_questions(args.dataset)
    record: dict[str, Any] = {
        "label": args.label,
        "mode": args.mode,
        "concurrency": args.concurrency,
        "chunks": index["chunks"],
        "env": args.env,
        "uptime_before": uptime(),
    }
    with tempfile.TemporaryDirectory(prefix="gw-thread-cpu-req-") as tmp:
        data = write_data_file(
            Path(tmp) / "requests.json",
            requests_for(workload, questions, str(index["collection"])),
        )
        record["rounds"] = [one_round(args, ghz, index_dir, data) for _ in range(args.rounds)]
    record["uptime_after"] = uptime()
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"thread_cpu-{args.label}"
    out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(record))
    print(markdown(record))


if __name__ == "__main__":
    main()
