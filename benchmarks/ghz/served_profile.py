"""Where a served Retrieve spends its CPU: py-spy samples of `groundwire serve` under ghz load.

Run from the repository root (the worktree's code on PYTHONPATH):
    python -m benchmarks.ghz.served_profile [--concurrency 8] [--duration 25] [--mode default]
        [--data-dir DIR] [--label NAME] [--gil]

Starts one server on the cached whole python-faq index (as benchmarks/ghz/runtimes.py: caches
off, `server.processes` 1), warms it, then runs ghz Retrieve at `--concurrency` clients for
`--duration` seconds while py-spy records on-CPU samples (idle threads left out, every thread) of the
server, and reads the process's CPU time from /proc before and after. Each sample is put in the
first bucket (`BUCKETS`, searched from the innermost frame outwards) that one of its frames
matches, so the buckets split the server's CPU per request (ms of CPU per completed call).
Writes results/served_profile-<label>.{json,md}, with the 25 functions holding most samples
inclusively.

`--gil` samples only the thread holding the GIL (py-spy `--gil`) and splits the time the GIL was
held per completed call instead of the CPU: the Python work that one process serialises, apart from
the model's forward pass, the FAISS scans and the gRPC core, which run without it. On-CPU samples
also count threads that are runnable but wait for a core or for the GIL, which inflate the thread
pool and event loop buckets on a loaded host; GIL samples do not.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.ghz.ghz_runs import Load
from benchmarks.ghz.loaded_server import loaded_server, probe_arguments, served_corpus
from benchmarks.ghz.machine import uptime
from benchmarks.ghz.results_file import write_record

LINE = re.compile(r":\d+\)$")
PY_SPY = Path(sys.executable).parent / "py-spy"
BUCKETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("query model (ONNX run)", ("onnx_embedder.py", "onnxruntime")),
    ("query tokenizer", ("tokenizers", "query_tokenizer.py", "length_groups.py")),
    ("embedding batcher", ("micro_batcher.py",)),
    ("dense search", ("core/dense/",)),
    ("lexical search", ("core/lexical/",)),
    ("section scores", ("section_scores.py", "_with_sections")),
    ("context assembly", ("core/context/",)),
    ("fusion and hits", ("fusion.py", "hit_builder.py", "_hit_chunks", "_rank ")),
    ("filter (risk levels)", ("_admitted", "_keep ")),
    ("store reads (SQLite)", ("core/store/",)),
    ("other pipeline", ("core/retrieve/", "core/catalog/", "core/observe/")),
    ("proto conversions", ("server/conversions.py",)),
    ("request validation", ("retrieve_validation.py", "server/retrieval_servicer.py")),
    ("server edge (handlers, auth)", ("server/",)),
    ("grpc aio", ("grpc/", "grpc_")),
    ("asyncio event loop", ("asyncio/",)),
    ("thread pool", ("concurrent/futures", "threading.py")),
)


def parse_args() -> argparse.Namespace:
    parser = probe_arguments(__doc__.splitlines()[0], 25.0)
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    parser.add_argument("--keep-raw", type=Path, help="copy py-spy's collapsed stacks here")
    parser.add_argument("--label", default="branch", help="results/served_profile-<label>.*")
    parser.add_argument("--gil", action="store_true", help="sample the GIL holder only")
    return parser.parse_args()


def process_cpu_s(pid: int) -> float:
    """User plus system CPU seconds of `pid` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bucket_of(frames: list[str]) -> str:
    """The first bucket any frame (innermost first) matches."""
    for frame in reversed(frames):
        for name, needles in BUCKETS:
            if any(needle in frame for needle in needles):
                return name
    return "other"


def read_samples(raw: Path) -> list[tuple[list[str], int]]:
    """py-spy's raw (collapsed) output: (frames outermost first, sample count) per line."""
    samples = []
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            samples.append((stack.split(";"), int(count)))
    return samples


def split(samples: list[tuple[list[str], int]], cpu_ms_per_call: float) -> dict[str, Any]:
    """Samples per bucket and the top inclusive functions, as shares and ms per call."""
    total = sum(count for _, count in samples) or 1
    buckets: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    for frames, count in samples:
        buckets[bucket_of(frames)] += count
        for frame in {LINE.sub(")", f) for f in frames}:
            inclusive[frame] += count

    def rows(counter: collections.Counter[str], limit: int) -> list[dict[str, Any]]:
        return [
            {
                "name": name,
                "share": round(n / total, 4),
                "ms_per_call": round(cpu_ms_per_call * n / total, 2),
            }
            for name, n in counter.most_common(limit)
        ]

    return {"samples": total, "buckets": rows(buckets, 50), "inclusive": rows(inclusive, 25)}


def main() -> None:
    args = parse_args()
    load_before = uptime()
    with served_corpus(args.dataset, args.data_dir, args.mode) as corpus:
        load = Load(args.concurrency, 1, args.duration + 4)
        with loaded_server(corpus, load, Load(2, 1, 3)) as server:
            raw = server.work / "profile.txt"
            cpu_before, started = process_cpu_s(server.pid), time.monotonic()
            subprocess.run(
                [str(PY_SPY), "record", "--pid", str(server.pid), "--nonblocking"]
                + ["-r", str(args.rate), "-d", f"{args.duration:g}", "-f", "raw", "-o", str(raw)]
                + (["--gil"] if args.gil else []),
                check=True,
                capture_output=True,
            )
            cpu_s, wall = process_cpu_s(server.pid) - cpu_before, time.monotonic() - started
            rps = server.calls_per_second()
            samples = read_samples(raw)
            if args.keep_raw:
                shutil.copy(raw, args.keep_raw)
    index = corpus.index
    calls = rps * wall
    cpu_ms_per_call = cpu_s / calls * 1000.0
    # one GIL holder at a time: its samples / rate are the seconds the GIL was held
    gil_ms_per_call = sum(n for _, n in samples) / args.rate / calls * 1000.0 if args.gil else None
    record = {
        "label": args.label,
        "mode": args.mode,
        "concurrency": args.concurrency,
        "corpus": {"documents": index["documents"], "chunks": index["chunks"]},
        "ghz_rps": round(rps, 1),
        "server_cores_busy": round(cpu_s / wall, 2),
        "server_cpu_ms_per_call": round(cpu_ms_per_call, 2),
        "sampled": "gil" if args.gil else "cpu",
        "gil_ms_per_call": None if gil_ms_per_call is None else round(gil_ms_per_call, 2),
        "uptime_before": load_before,
        "uptime_after": uptime(),
        **split(samples, cpu_ms_per_call if gil_ms_per_call is None else gil_ms_per_call),
    }
    write_record(f"served_profile-{args.label}", record, markdown)


def markdown(record: dict[str, Any]) -> str:
    unit = "ms GIL / call" if record.get("sampled") == "gil" else "ms CPU / call"
    held = (
        f" GIL held **{record['gil_ms_per_call']} ms per call** (py-spy `--gil`: the holder only)."
        if record.get("sampled") == "gil"
        else ""
    )
    lines = [
        f"# Served Retrieve {record['mode']} at {record['concurrency']} clients: {record['label']}",
        "",
        f"{record['ghz_rps']} calls/s, server {record['server_cores_busy']} cores busy, "
        f"**{record['server_cpu_ms_per_call']} ms CPU per call**; {record['samples']} py-spy "
        f"samples.{held} Load before: `{record['uptime_before']}`, after: "
        f"`{record['uptime_after']}`.",
        "",
        f"| bucket | share | {unit} |",
        "|---|---:|---:|",
        *(f"| {b['name']} | {b['share']:.1%} | {b['ms_per_call']} |" for b in record["buckets"]),
        "",
        "Top functions (inclusive):",
        "",
        f"| function | share | {unit} |",
        "|---|---:|---:|",
        *(
            f"| `{b['name']}` | {b['share']:.1%} | {b['ms_per_call']} |"
            for b in record["inclusive"]
        ),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
