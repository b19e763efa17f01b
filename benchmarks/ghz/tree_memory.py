"""Resident memory of a process tree: VmRSS of a process and of each live descendant."""

from __future__ import annotations

from pathlib import Path

from benchmarks.ghz.cores_busy import PROC, parse_stat


def tree_rss_mib(root: int, proc: Path = PROC) -> list[float]:
    """VmRSS in MiB of `root`, then of its live descendants (breadth first)."""
    children: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                fields = parse_stat((entry / "stat").read_text())
            except (OSError, ValueError):
                continue
            children.setdefault(fields.ppid, []).append(fields.pid)
    sizes, pending = [], [root]
    while pending:
        pid = pending.pop(0)
        try:
            status = (proc / str(pid) / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                sizes.append(round(int(line.split()[1]) / 1024, 1))
        pending.extend(sorted(children.get(pid, [])))
    return sizes
