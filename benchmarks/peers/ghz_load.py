"""groundwire's load rows driven by ghz instead of the Python client, in the same peers run.

The Python driver (load_driver.py) runs its client threads in the benchmark's own process, on the
same two cores as the server: at 8 and 32 threads the client's gRPC and protobuf work and its GIL
take CPU the server would otherwise use, a cost the embedded peers do not pay (they have no
client) and a service calling groundwire from another machine does not put on the server's
cores. ghz (Go) is the load tool the issue names; these rows send the very requests of the Python
rows (same questions in the same cycle, top_k 10, max_hits_per_document 1, one HTTP/2 connection
per client as the Python rows have) to the same server, so the two drivers' rows differ only in
the client. Recall and MRR are those of the Python rows (the same server and requests).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.ghz.ghz_runs import GhzTools, Load, run_ghz
from benchmarks.ghz.ghz_tool import ensure_ghz, ensure_html_report
from benchmarks.ghz.request_files import (
    RETRIEVE,
    WORKLOADS,
    load_questions,
    requests_for,
    write_data_file,
)
from benchmarks.peers.load_driver import K


def ghz_tools(cache: Path, work: Path) -> GhzTools:
    """The pinned ghz (installed into `cache` on first use); reports go to scratch in `work`."""
    return GhzTools(ensure_ghz(cache), ensure_html_report(cache), work / "ghz-reports")


def ghz_load(
    tools: GhzTools,
    target: str,
    dataset: Path,
    collection: str,
    mode: str,
    threads: list[int],
    duration_s: float,
    server_pid: int,
) -> list[dict[str, Any]]:
    """One ghz run per client count (`--concurrency n --connections n`), mode "dense" or
    "default": the load_driver row fields (qps counts OK calls; driver_cores_busy is ghz's)
    plus the server's cores busy."""
    workload = next(w for w in WORKLOADS if w.name == f"retrieve-{mode}")
    requests = requests_for(workload, load_questions(dataset), collection, K, 1)
    data_file = write_data_file(tools.reports / f"{workload.name}.requests.json", requests)
    rows = []
    for n in threads:
        load = Load(concurrency=n, connections=n, duration_s=duration_s)
        run = run_ghz(tools, f"{workload.name}-c{n}", target, RETRIEVE, data_file, load, server_pid)
        rows.append(
            {
                "threads": n,
                "calls": run["ok"],
                "errors": run["errors"],
                "qps": run["ok_rps"],
                "p50_ms": run["p50_ms"],
                "p99_ms": run["p99_ms"],
                "server_cores_busy": run["server_cores_busy"],
                "driver_cores_busy": run["ghz_cores_busy"],
            }
        )
    return rows
