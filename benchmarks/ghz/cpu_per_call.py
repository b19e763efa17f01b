"""Server CPU per call from `runtimes.py` results: cores busy / RPS of every run, per variant.

Run from the repository root:
    python -m benchmarks.ghz.cpu_per_call results/ghz_leanpath_p0.json [more.json ...]

On a shared machine a run's RPS moves with the other load; the server's own CPU per completed
call (its process tree's CPU seconds over the run / calls) moves much less, so variants are
compared on it too. Prints one markdown table per file: median and every round's ms per call.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def table(path: Path) -> str:
    """The markdown table of one results file."""
    record = json.loads(path.read_text())
    cells: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    rps: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for row in record["rows"]:
        key = (row["workload"], row["concurrency"], row["variant"])
        cells[key].append(row["server_cores_busy"] / row["ok_rps"] * 1000.0)
        rps[key].append(row["ok_rps"])
    lines = [
        f"`{path.name}`:",
        "",
        "| workload | c | variant | server CPU ms / call (median) | rounds | RPS (median) |",
        "|---|---|---|---:|---|---:|",
    ]
    for key in sorted(cells):
        each = " / ".join(f"{v:.1f}" for v in cells[key])
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {statistics.median(cells[key]):.2f} | {each} "
            f"| {statistics.median(rps[key]):.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    for name in sys.argv[1:]:
        print(table(Path(name)))


if __name__ == "__main__":
    main()
