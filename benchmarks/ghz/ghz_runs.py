"""One ghz run against a running server: the JSON and HTML reports, the summary row, and the
cores the server (and ghz itself) kept busy meanwhile."""

from __future__ import annotations

import json
import resource
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.ghz.cores_busy import cores_busy, sample
from benchmarks.ghz.ghz_summary import summarize

ROOT = Path(__file__).resolve().parents[2]
PROTO_ROOT = ROOT / "proto"
PROTO_FILE = PROTO_ROOT / "groundwire" / "v1" / "retrieval_service.proto"


@dataclass(frozen=True, slots=True)
class GhzTools:
    """The ghz binary, the HTML converter and where reports go."""

    ghz: Path
    html_report: Path
    reports: Path
    keep_details: bool = False


@dataclass(frozen=True, slots=True)
class Load:
    """How one run loads the server."""

    concurrency: int
    connections: int
    duration_s: float
    rps: int = 0  # 0: as fast as the workers go; else a constant rate (ghz --rps)
    timeout_s: float = 300.0
    # ghz --duration-stop: "ignore" drops calls still in flight when the time is up; "wait" lets
    # them finish and counts them (for calls that take a large share of a run, like Answer)
    stop: str = "ignore"


def ghz_command(
    ghz: Path,
    target: str,
    call: str,
    data_file: Path,
    load: Load,
    output: Path,
    metadata: dict[str, str] | None = None,
) -> list[str]:
    """The ghz argument list for one run writing a JSON report to `output`."""
    command = [
        str(ghz),
        "--insecure",
        "--proto",
        str(PROTO_FILE),
        "--import-paths",
        str(PROTO_ROOT),
        "--call",
        call,
        "--data-file",
        str(data_file),
        "--concurrency",
        str(load.concurrency),
        "--connections",
        str(load.connections),
        "--duration",
        f"{load.duration_s:g}s",
        "--duration-stop",
        load.stop,
        "--timeout",
        f"{load.timeout_s:g}s",
        "--format",
        "json",
        "--output",
        str(output),
    ]
    if load.rps:
        command += ["--rps", str(load.rps)]
    if metadata:
        command += ["--metadata", json.dumps(metadata)]
    return [*command, target]


def run_ghz(
    tools: GhzTools,
    name: str,
    target: str,
    call: str,
    data_file: Path,
    load: Load,
    server_pid: int,
    metadata: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run ghz once; write `<name>.json` (details dropped unless kept) and `<name>.html`;
    return the summary row with server and client cores busy."""
    tools.reports.mkdir(parents=True, exist_ok=True)
    raw = tools.reports / f"{name}.raw.json"
    client_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_before = sample(server_pid)
    started = time.monotonic()
    subprocess.run(
        ghz_command(tools.ghz, target, call, data_file, load, raw, metadata),
        check=True,
        cwd=ROOT,
    )
    server_after = sample(server_pid)
    wall = time.monotonic() - started
    client_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    html = tools.reports / f"{name}.html"
    subprocess.run([str(tools.html_report), str(raw), str(html)], check=True)
    report = json.loads(raw.read_text())
    if not tools.keep_details:
        report.pop("details", None)
        # the request array is the data file request_files.py writes; not repeated per report
        report.get("options", {}).pop("data", None)
    (tools.reports / f"{name}.json").write_text(json.dumps(report, indent=1) + "\n")
    raw.unlink()
    client_cpu = (client_after.ru_utime + client_after.ru_stime) - (
        client_before.ru_utime + client_before.ru_stime
    )
    return {
        "name": name,
        "concurrency": load.concurrency,
        "connections": load.connections,
        "target_rps": load.rps or None,
        "duration_stop": load.stop,
        **summarize(report),
        "server_cores_busy": round(cores_busy(server_before, server_after), 2),
        "ghz_cores_busy": round(client_cpu / wall, 2),
        "load_1m_after": float(Path("/proc/loadavg").read_text().split()[0]),
        "report_json": _shown(tools.reports / f"{name}.json"),
        "report_html": _shown(html),
    }


def _shown(path: Path) -> str:
    """`path` relative to the repository when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
