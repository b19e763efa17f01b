"""How many server processes to run (`server.processes`; 0 = one per available core)."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

from server.settings import Settings, StorageBackendKind

logger = logging.getLogger(__name__)

CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def available_cores(cpu_max: Path = CGROUP_CPU_MAX) -> int:
    """Cores this process may use: its CPU affinity, capped by a cgroup v2 CPU quota (a container
    limited to 2 CPUs on a 32-core node gets 2, rounded up)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]
    except (OSError, ValueError):
        return cores
    if quota == "max":
        return cores
    try:
        return max(1, min(cores, math.ceil(int(quota) / int(period))))
    except (ValueError, ZeroDivisionError):
        return cores


def resolved_processes(settings: Settings) -> int:
    """`server.processes`, with 0 resolved to the available cores (1 with a Milvus backend,
    whose replicas each write)."""
    wanted = settings.server.processes
    if wanted:
        return wanted
    if settings.storage.backend is not StorageBackendKind.LOCAL:
        return 1
    return available_cores()
