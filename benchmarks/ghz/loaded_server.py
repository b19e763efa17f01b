"""The cached python-faq index with its Retrieve request file, and one `groundwire serve` on a copy
of it, warmed, with ghz load running: what the in-server probes (`served_profile.py`,
`thread_cpu.py`) measure inside."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.ghz.faq_index import DEFAULT_CACHE, DEFAULT_DATASET, ensure_index
from benchmarks.ghz.ghz_runs import Load, ghz_command
from benchmarks.ghz.ghz_tool import ensure_ghz
from benchmarks.ghz.request_files import (
    WORKLOADS,
    Workload,
    load_questions,
    requests_for,
    write_data_file,
)
from benchmarks.ghz.run import SERVER_ENV
from tests.serve_subprocess import ServeSubprocess

SETTLE_S = 2.0
"""Seconds of load before the probe starts, so it sees the steady state."""


def probe_arguments(description: str, duration_s: float) -> argparse.ArgumentParser:
    """A parser with the options every in-server probe takes: the index cache, the dataset, the
    Retrieve mode, the clients and the seconds measured (default `duration_s`)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_CACHE, help="index/ghz cache")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--mode", choices=("default", "dense"), default="default")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--duration", type=float, default=duration_s, help="seconds measured")
    return parser


@dataclass(frozen=True, slots=True)
class LoadedServer:
    """The server's pid and its scratch directory while ghz loads it."""

    pid: int
    work: Path
    _ghz: subprocess.Popen[bytes]
    _report: Path

    def calls_per_second(self) -> float:
        """Waits for ghz to end; the RPS of its run."""
        self._ghz.wait()
        return float(json.loads(self._report.read_text())["rps"])


@dataclass(frozen=True, slots=True)
class ServedCorpus:
    """The cached index (its directory and record), ghz, and a Retrieve workload's request file."""

    index_dir: Path
    index: dict[str, Any]
    ghz: Path
    workload: Workload
    data: Path


@contextmanager
def served_corpus(dataset: Path, data_dir: Path, mode: str) -> Iterator[ServedCorpus]:
    """The whole `dataset` indexed once (cached under `data_dir`), ghz, and the Retrieve `mode`
    requests cycling its questions (a temporary file)."""
    index_dir, index = ensure_index(dataset, data_dir, None)
    ghz = ensure_ghz(data_dir)
    workload = next(w for w in WORKLOADS if w.name == f"retrieve-{mode}")
    with tempfile.TemporaryDirectory(prefix="gw-requests-") as tmp:
        data = write_data_file(
            Path(tmp) / "requests.json",
            requests_for(workload, load_questions(dataset), str(index["collection"])),
        )
        yield ServedCorpus(index_dir, index, ghz, workload, data)


@contextmanager
def loaded_server(
    corpus: ServedCorpus, load: Load, warm: Load, env: dict[str, str] | None = None
) -> Iterator[LoadedServer]:
    """A server (`SERVER_ENV` plus `env`) on a copy of the corpus' index, warmed by `warm`, with
    `load` running from ghz for `SETTLE_S` seconds already; stopped on exit."""
    ghz, call, data = corpus.ghz, corpus.workload.call, corpus.data
    with tempfile.TemporaryDirectory(prefix="gw-loaded-") as tmp:
        work = Path(tmp)
        shutil.copytree(corpus.index_dir, work / "data")
        server = ServeSubprocess.start(
            work / "data", work / "server.log", {**SERVER_ENV, **(env or {})}, 900
        )
        try:
            command = ghz_command(ghz, server.target, call, data, warm, work / "warm")
            subprocess.run(command, check=True, capture_output=True)
            report = work / "run.json"
            ghz_run = subprocess.Popen(ghz_command(ghz, server.target, call, data, load, report))
            try:
                time.sleep(SETTLE_S)
                yield LoadedServer(server.process.pid, work, ghz_run, report)
            finally:
                ghz_run.wait()
        finally:
            server.stop()
