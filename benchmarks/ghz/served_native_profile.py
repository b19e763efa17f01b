"""Where a served Retrieve spends its CPU natively: `perf` samples of `groundwire serve` under ghz.

Run from the repository root (the worktree's code on PYTHONPATH; needs `perf`, Debian's
linux-perf, and root or perf_event_paranoid <= 1):
    python -m benchmarks.ghz.served_native_profile [--concurrency 8] [--duration 15]
        [--mode default] [--label NAME] [--env KEY=VALUE ...]

Starts one server on the cached whole python-faq index (as `served_profile.py`: caches off,
`server.processes` 1), warms it, runs ghz Retrieve at `--concurrency` clients and records the
server with `perf record` (every thread, on-CPU only). Splits the samples by shared object (the
model's onnxruntime, the interpreter, FAISS, the kernel, grpc's core, ...) and by thread with
each thread's top objects, each scaled to ms of CPU per completed call (the process's CPU time
from /proc over the window). Unlike py-spy's samples (`served_profile.py`), these count only
time on a core: a thread that waits for the GIL or a core is not sampled, and native work
(the loop's C, grpc's core, malloc) is seen where it runs. Writes
results/served_native_profile-<label>.{json,md}.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import time
from typing import Any

from benchmarks.ghz.ghz_runs import Load
from benchmarks.ghz.loaded_server import loaded_server, probe_arguments, served_corpus
from benchmarks.ghz.machine import uptime
from benchmarks.ghz.results_file import write_record
from benchmarks.ghz.served_profile import process_cpu_s
from benchmarks.ghz.thread_cpu import python_names, thread_cpu

FREQUENCY = 499
"""perf samples per second per thread (a prime, off the kernel's timer multiples)."""
SAMPLE = re.compile(r"\s*(?P<tid>\d+)\s+[0-9a-f]+\s+\((?P<path>[^()]*)\)\s*$")


def parse_args() -> argparse.Namespace:
    parser = probe_arguments(__doc__.splitlines()[0], 15.0)
    parser.add_argument("--label", default="branch", help="results/served_native_profile-<label>.*")
    parser.add_argument("--env", action="append", default=[], help="server env KEY=VALUE")
    return parser.parse_args()


def object_name(path: str) -> str:
    """A shared object's short name: `libpython3.11.so.1.0`, `[kernel.kallsyms]`."""
    name = path.rsplit("/", 1)[-1]
    return re.sub(r"\.cpython-\d+-[\w-]+\.so$", ".so", name)


def read_script(text: str) -> list[tuple[int, str]]:
    """`perf script -F tid,ip,dso` output of a record without call graphs, a line per sample
    (`tid ip (object)`): (thread id, the object it ran in) per sample."""
    return [
        (int(match["tid"]), object_name(match["path"]))
        for match in map(SAMPLE.match, text.splitlines())
        if match
    ]


def split(
    samples: list[tuple[int, str]], names: dict[int, str], cpu_ms_per_call: float
) -> dict[str, Any]:
    """Samples per object and per thread (with its top objects), as shares and ms per call."""
    total = len(samples) or 1
    objects = collections.Counter(o for _, o in samples)
    threads: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for tid, obj in samples:
        threads[f"{names.get(tid, '?')} ({tid})"][obj] += 1

    def cost(n: int) -> dict[str, Any]:
        return {"share": round(n / total, 4), "ms_per_call": round(cpu_ms_per_call * n / total, 2)}

    return {
        "samples": len(samples),
        "objects": [{"name": o, **cost(n)} for o, n in objects.most_common(15)],
        "threads": [
            {
                "name": name,
                **cost(sum(counter.values())),
                "top": [{"name": o, **cost(n)} for o, n in counter.most_common(4)],
            }
            for name, counter in sorted(threads.items(), key=lambda kv: -sum(kv[1].values()))[:10]
        ],
    }


def main() -> None:
    args = parse_args()
    perf = shutil.which("perf")
    if perf is None:
        raise SystemExit("perf is not installed: apt-get install linux-perf")
    env = dict(item.split("=", 1) for item in args.env)
    load_before = uptime()
    with served_corpus(args.dataset, args.data_dir, args.mode) as corpus:
        load = Load(args.concurrency, 1, args.duration + 4)
        with loaded_server(corpus, load, Load(2, 1, 3), env) as server:
            data = server.work / "perf.data"
            cpu_before, started = process_cpu_s(server.pid), time.monotonic()
            subprocess.run(
                [perf, "record", "-F", str(FREQUENCY), "-p", str(server.pid)]
                + ["-o", str(data), "--", "sleep", f"{args.duration:g}"],
                check=True,
                capture_output=True,
            )
            cpu_s, wall = process_cpu_s(server.pid) - cpu_before, time.monotonic() - started
            names = {tid: name for tid, (name, _, _) in thread_cpu(server.pid).items()}
            names.update(python_names(server.pid))  # MainThread, gw-retrieve_0, ...
            rps = server.calls_per_second()
            script = subprocess.run(
                [perf, "script", "-i", str(data), "-F", "tid,ip,dso"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
    cpu_ms_per_call = cpu_s / (rps * wall) * 1000.0
    record = {
        "label": args.label,
        "mode": args.mode,
        "concurrency": args.concurrency,
        "server_env": env,
        "corpus": {"documents": corpus.index["documents"], "chunks": corpus.index["chunks"]},
        "ghz_rps": round(rps, 1),
        "server_cores_busy": round(cpu_s / wall, 2),
        "server_cpu_ms_per_call": round(cpu_ms_per_call, 2),
        "uptime_before": load_before,
        "uptime_after": uptime(),
        **split(read_script(script), names, cpu_ms_per_call),
    }
    write_record(f"served_native_profile-{args.label}", record, markdown)


def markdown(record: dict[str, Any]) -> str:
    """The record as the results file's table."""
    lines = [
        f"# Served Retrieve {record['mode']} at {record['concurrency']} clients, perf: "
        f"{record['label']}",
        "",
        f"{record['ghz_rps']} calls/s, server {record['server_cores_busy']} cores busy, "
        f"**{record['server_cpu_ms_per_call']} ms CPU per call**; {record['samples']} perf "
        f"samples (on-CPU only); server env {record['server_env'] or 'as the harness'}. Load "
        f"before: `{record['uptime_before']}`, after: `{record['uptime_after']}`.",
        "",
        "| shared object | share | ms CPU / call |",
        "|---|---:|---:|",
        *(f"| `{o['name']}` | {o['share']:.1%} | {o['ms_per_call']} |" for o in record["objects"]),
        "",
        "| thread | share | ms CPU / call | where it ran |",
        "|---|---:|---:|---|",
        *(
            f"| {t['name']} | {t['share']:.1%} | {t['ms_per_call']} | "
            + ", ".join(f"`{o['name']}` {o['ms_per_call']}" for o in t["top"])
            + " |"
            for t in record["threads"]
        ),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
