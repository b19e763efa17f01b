"""How many server processes to run (`server.processes`; 0 = one per available core), and how
many threads each process's query model gets (`model.onnx_threads`; 0 = its share of the cores)."""

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


def query_model_threads(configured: int, processes: int, cores: int | None = None) -> int:
    """onnxruntime intra-op threads of one process's query model: `configured` when set, else the
    available cores (`cores`, default `available_cores()`) shared among the `processes` server
    processes, at least one each.

    Left to itself onnxruntime starts a pool of one thread per physical core in every process,
    so N processes ran N x cores model threads on `cores` cores (and a container's CPU quota was
    ignored). With the pools waking one another between the graph's operators that cost
    throughput: on the 2-core machine, 2 processes of 1 thread each against 2 of 2 threads
    served 1-22 % more Retrieve calls per second at 8 and 32 clients in every cell of two
    interleaved ghz runs (benchmarks/results/ghz_query_model_threads.md)."""
    if configured > 0:
        return configured
    return cores_per_process(processes, cores)


def retrieval_threads(settings: Settings, processes: int, cores: int | None = None) -> int:
    """Threads of one process that run Retrieve's stages beside the embedding, and those of its
    lexical searches: `server.retrieval_threads` when set; else, with the local backend, the
    available cores (`cores`, default `available_cores()`) shared among the `processes` server
    processes, at least one each; with a remote one `server.worker_threads` (a search waits on
    the network there, not on this host's cores).

    The stages are Python between short native calls (FAISS, SQLite, Tantivy), so threads beyond
    the cores mostly take the GIL from one another, the event loop and the embedding batcher: on
    the 2-core machine, 2 processes with 1 thread each against 8 each served 7.7 % more Retrieve
    calls per second at 8 clients (5 of 6 interleaved ghz rounds) and 3 % more at 32, with p99 at
    32 clients 167 against 212 ms (benchmarks/results/ghz_retrieval_threads.md)."""
    configured = settings.server.retrieval_threads
    if configured > 0:
        return configured
    if settings.storage.backend is not StorageBackendKind.LOCAL:
        return settings.server.worker_threads
    return cores_per_process(processes, cores)


def cores_per_process(processes: int, cores: int | None = None) -> int:
    """The available cores (`cores`, default `available_cores()`) shared among `processes`
    server processes, at least one each."""
    share = (available_cores() if cores is None else cores) // max(1, processes)
    return max(1, share)
