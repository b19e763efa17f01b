"""Which threads of a served Retrieve burn the CPU: per-thread CPU per call under ghz load.

Run from the repository root:
    python -m benchmarks.ghz.thread_cpu [--mode default] [--concurrency 8] [--duration 20]
        [--rounds 2] [--label NAME] [--env KEY=VALUE ...]

Starts one server on the cached whole python-faq index (as `served_profile.py`: caches off,
`server.processes` 1), warms it, then runs ghz Retrieve at `--concurrency` clients while reading
/proc/<pid>/task/*/stat before and after a window of `--duration` seconds: each thread's user and
system CPU over the window, per completed call. With py-spy beside the interpreter (`pip install
py-spy`), threads carry their Python names from its dump (the event loop's MainThread, gw-work_*,
gw-retrieve_*, gw-lexical_*, query-micro-batcher); the others keep their kernel names (grpc's
event_engine; unnamed native threads, which gdb showed to be mostly onnxruntime's intra-op pool
when the query session has more than one thread, show as "python"). py-spy's samples count
threads waiting for the GIL as busy; the kernel's counters do not. Writes
results/thread_cpu-<label>.{json,md}.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.ghz.cores_busy import CLOCK_TICKS, PROC, parse_stat
from benchmarks.ghz.ghz_runs import Load
from benchmarks.ghz.loaded_server import ServedCorpus, loaded_server, probe_arguments, served_corpus
from benchmarks.ghz.machine import uptime
from benchmarks.ghz.results_file import write_record

PY_SPY = Path(sys.executable).parent / "py-spy"
DUMP_THREAD = re.compile(r'Thread (\d+) \(\w+\): "([^"]*)"')
GROUPS = (
    ("gw-work_", "worker pool (gw-work)"),
    ("gw-retrieve_", "retrieval pool (gw-retrieve)"),
    ("gw-lexical_", "lexical pool (gw-lexical)"),
)


def parse_args() -> argparse.Namespace:
    parser = probe_arguments(__doc__.splitlines()[0], 20.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--label", default="main", help="results/thread_cpu-<label>.*")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the server")
    return parser.parse_args()


def thread_cpu(pid: int, proc: Path = PROC) -> dict[int, tuple[str, float, float]]:
    """Kernel name, user and system CPU seconds of every thread of `pid` so far."""
    found: dict[int, tuple[str, float, float]] = {}
    for task in (proc / str(pid) / "task").iterdir():
        try:
            stat = parse_stat((task / "stat").read_text())
        except OSError:  # the thread ended meanwhile
            continue
        found[int(task.name)] = (stat.name, stat.utime / CLOCK_TICKS, stat.stime / CLOCK_TICKS)
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


def one_round(args: argparse.Namespace, corpus: ServedCorpus) -> dict[str, Any]:
    """One server, warmed, measured once under load."""
    env = dict(item.split("=", 1) for item in args.env)
    load = Load(args.concurrency, 1, args.duration + 4)
    with loaded_server(corpus, load, Load(8, 1, 4), env) as server:
        names = python_names(server.pid)
        before, started = thread_cpu(server.pid), time.monotonic()
        time.sleep(args.duration)
        after, wall = thread_cpu(server.pid), time.monotonic() - started
        names |= python_names(server.pid)
        rps = server.calls_per_second()
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
    record: dict[str, Any] = {
        "label": args.label,
        "mode": args.mode,
        "concurrency": args.concurrency,
        "env": args.env,
        "uptime_before": uptime(),
    }
    with served_corpus(args.dataset, args.data_dir, args.mode) as corpus:
        record["chunks"] = corpus.index["chunks"]
        record["rounds"] = [one_round(args, corpus) for _ in range(args.rounds)]
    record["uptime_after"] = uptime()
    write_record(f"thread_cpu-{args.label}", record, markdown)


if __name__ == "__main__":
    main()
