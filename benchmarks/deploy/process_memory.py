"""Resident memory of each process of a `server.processes = 2` server: a baseline commit vs this tree.

Run from the repository root:
    python -m benchmarks.deploy.process_memory [--baseline-ref REF] [--rounds 2] [--data-dir DIR]

Both servers serve copies of the same cached python-faq index (600 sections, benchmarks/ghz/
faq_index.py) with the default settings (model.runtime auto, caches on, extractive answers); the
baseline runs the code of `--baseline-ref` (exported with `git archive`), the other this
checkout. Each round starts one server of each in turn (order alternating), reads VmRSS of every
process of its tree (benchmarks/ghz/tree_memory.py) once it serves, then after a read workload
on CONNECTIONS connections (each its own TCP connection, so both processes serve): QUERIES
Retrieve calls and one Answer per connection. Writes results/process_memory[-<--name>].{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from benchmarks.ghz.faq_index import DEFAULT_CACHE, DEFAULT_DATASET, QUICK_SECTIONS, ensure_index
from benchmarks.ghz.machine import machine_record, uptime
from benchmarks.ghz.request_files import load_questions
from benchmarks.ghz.tree_memory import tree_rss_mib
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.serve_subprocess import ServeSubprocess

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
CONNECTIONS = 8
QUERIES = 400
ENV = {"GROUNDWIRE_SERVER__PROCESSES": "2", "GROUNDWIRE_GENERATOR__KIND": "extractive"}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", default="71b0324", help="git ref of the baseline")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_CACHE, help="index cache")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--name", default="", help="suffix of the result files")
    return parser.parse_args()


def export_tree(ref: str, into: Path) -> str:
    """The files of `ref` under `into`; its full commit id."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return subprocess.run(
        ["git", "rev-parse", ref], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


def workload(target: str, collection: str, questions: list[str]) -> None:
    """QUERIES Retrieve calls spread over CONNECTIONS connections, then one Answer on each."""
    channels = [
        grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(CONNECTIONS)
    ]
    try:
        stubs = [rs_grpc.RetrievalServiceStub(channel) for channel in channels]
        for number in range(QUERIES):
            question = questions[number % len(questions)]
            stubs[number % CONNECTIONS].Retrieve(
                rs.RetrieveRequest(query=question, collection=collection), timeout=120
            )
        for number, stub in enumerate(stubs):
            request = rs.AnswerRequest(
                retrieve=rs.RetrieveRequest(query=questions[number], collection=collection)
            )
            for _ in stub.Answer(request, timeout=300):
                pass
    finally:
        for channel in channels:
            channel.close()


def measure(
    label: str, tree: Path, index_dir: Path, scratch: Path, collection: str, questions: list[str]
) -> dict[str, Any]:
    """Start one server running `tree`'s code, read its processes' RSS idle and after work."""
    data_dir = scratch / f"{label}-data"
    shutil.copytree(index_dir, data_dir)
    path = f"{tree}{os.pathsep}{tree / 'clients' / 'python'}"
    env = {**ENV, "PYTHONPATH": path}
    here = Path.cwd()
    os.chdir(tree)  # `python -m server` imports from its working directory first
    try:
        server = ServeSubprocess.start(data_dir, scratch / f"{label}.log", env, 900)
    finally:
        os.chdir(here)
    try:
        time.sleep(5)  # let start-up allocations settle
        idle = tree_rss_mib(server.process.pid)
        workload(server.target, collection, questions)
        time.sleep(2)
        served = tree_rss_mib(server.process.pid)
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    # the tree: primary, then its children (the two largest are primary and reader; the small
    # one is multiprocessing's resource tracker)
    lazy = "passages loaded on first use" in server.log_text()
    loaded = "on its first use" in server.log_text()
    return {
        "idle": idle,
        "served": served,
        "startup_s": round(server.startup_s, 1),
        "reader_lazy": lazy,
        "reader_loaded_passage_model": loaded,
    }


def main() -> None:
    args = parse_args()
    index_dir, index = ensure_index(args.dataset, args.data_dir, QUICK_SECTIONS)
    questions = load_questions(args.dataset)
    load_before = uptime()
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="gw-procmem-") as tmp:
        scratch = Path(tmp)
        baseline_commit = export_tree(args.baseline_ref, scratch / "baseline")
        trees = {"baseline": scratch / "baseline", "this tree": ROOT}
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for label in order:
                result = measure(
                    label, trees[label], index_dir, scratch, str(index["collection"]), questions
                )
                result.update(label=label, round=round_)
                print(json.dumps(result), flush=True)
                runs.append(result)
    record = {
        "machine": machine_record(),
        "baseline": {"ref": args.baseline_ref, "commit": baseline_commit},
        "corpus": {"documents": index["documents"], "chunks": index["chunks"]},
        "connections": CONNECTIONS,
        "queries": QUERIES,
        "load_before": load_before,
        "load_after": uptime(),
        "runs": runs,
    }
    stem = "process_memory" + (f"-{args.name}" if args.name else "")
    (RESULTS / f"{stem}.json").write_text(json.dumps(record, indent=2) + "\n")
    text = markdown(record)
    (RESULTS / f"{stem}.md").write_text(text)
    print(text)


def markdown(record: dict[str, Any]) -> str:
    """Median over rounds per variant, phase and process; every round's values beside it."""
    machine = record["machine"]
    lines = [
        "# Resident memory per process, server.processes = 2 (benchmarks/deploy/process_memory.py)",
        "",
        f"{machine['date']}, commit {machine['commit']}, {machine['cores']} cores. Baseline: "
        f"{record['baseline']['ref']} ({record['baseline']['commit'][:10]}). Corpus: python-faq "
        f"600-section subset, {record['corpus']['documents']} documents, "
        f"{record['corpus']['chunks']} chunks; default settings (model.runtime auto, caches on, "
        "extractive answers). VmRSS MiB, median over rounds (each round's values in brackets); "
        f"'served': after {record['queries']} Retrieve and {record['connections']} Answer calls "
        f"over {record['connections']} connections (both processes serve).",
        "",
        f"- load before: `{record['load_before']}`",
        f"- load after: `{record['load_after']}`",
        "",
        "| code | phase | primary MiB | reader MiB | whole tree MiB |",
        "|---|---|---|---|---|",
    ]
    for label in ("baseline", "this tree"):
        runs = [r for r in record["runs"] if r["label"] == label]
        for phase in ("idle", "served"):
            primary = [r[phase][0] for r in runs]
            reader = [max(r[phase][1:]) for r in runs]  # the tracker is the small child
            total = [round(sum(r[phase]), 1) for r in runs]
            lines.append(
                f"| {label} | {phase} | {_cell(primary)} | {_cell(reader)} | {_cell(total)} |"
            )
    return "\n".join(lines) + "\n"


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({', '.join(f'{v:,.0f}' for v in values)})"


if __name__ == "__main__":
    main()
