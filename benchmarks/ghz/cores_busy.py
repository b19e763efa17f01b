"""Cores a process tree keeps busy: CPU seconds (user + system, live descendants and reaped
children included) from /proc/<pid>/stat, over wall-clock seconds."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class StatFields:
    """The fields of one /proc/<pid>/stat line this module needs (times in clock ticks)."""

    pid: int
    name: str
    """The kernel's command name (a thread's, read from a task's stat)."""
    ppid: int
    utime: int
    stime: int
    cutime: int
    cstime: int


def parse_stat(line: str) -> StatFields:
    """Parse a /proc/<pid>/stat line; the command name may hold spaces and parentheses."""
    pid, _, rest = line.partition(" (")
    end = rest.rindex(") ")
    fields = rest[end + 2 :].split()
    # fields[0] is field 3 (state); ppid is field 4, utime..cstime fields 14-17.
    return StatFields(
        pid=int(pid),
        name=rest[:end],
        ppid=int(fields[1]),
        utime=int(fields[11]),
        stime=int(fields[12]),
        cutime=int(fields[13]),
        cstime=int(fields[14]),
    )


def _all_stats(proc: Path) -> dict[int, StatFields]:
    stats = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stats[int(entry.name)] = parse_stat((entry / "stat").read_text())
        except (OSError, ValueError):
            continue  # exited while we looked
    return stats


def tree_cpu_ticks(stats: dict[int, StatFields], root: int) -> int:
    """utime + stime + cutime + cstime of `root` and of every live descendant."""
    children: dict[int, list[int]] = {}
    for fields in stats.values():
        children.setdefault(fields.ppid, []).append(fields.pid)
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        if pid in stats:
            f = stats[pid]
            total += f.utime + f.stime + f.cutime + f.cstime
        pending.extend(children.get(pid, []))
    return total


def cpu_seconds(pid: int, proc: Path = PROC) -> float:
    """CPU seconds used so far by `pid`'s process tree."""
    return tree_cpu_ticks(_all_stats(proc), pid) / CLOCK_TICKS


@dataclass(frozen=True, slots=True)
class CpuSample:
    """CPU seconds of a tree and the monotonic clock, at one moment."""

    cpu_s: float
    wall_s: float


def sample(pid: int, proc: Path = PROC) -> CpuSample:
    """A CpuSample of `pid`'s tree now."""
    return CpuSample(cpu_seconds(pid, proc), time.monotonic())


def cores_busy(before: CpuSample, after: CpuSample) -> float:
    """Average cores busy between two samples (CPU seconds over wall seconds)."""
    wall = after.wall_s - before.wall_s
    if wall <= 0:
        raise ValueError("samples must be taken in order, at different times")
    return (after.cpu_s - before.cpu_s) / wall
