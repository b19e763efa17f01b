"""`server.processes`: validation naming the fix, 0 resolved to the available cores (cgroup CPU
quota included, 1 with Milvus), and the shared port: free ports resolved once, taken ones
refused with the setting to change."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from core.errors import InvalidArgument
from server.process_count import (
    available_cores,
    query_model_threads,
    resolved_processes,
    retrieval_threads,
)
from server.settings import load_settings
from server.shared_port import reserve_shared_port

MILVUS = {
    "GROUNDWIRE_STORAGE__BACKEND": "milvus",
    "GROUNDWIRE_STORAGE__MILVUS_URI": "http://milvus:19530",
}


def test_out_of_range_counts_name_the_setting() -> None:
    with pytest.raises(InvalidArgument, match=r"server\.processes: must be 0-64 \(0: one per"):
        load_settings(env={"GROUNDWIRE_SERVER__PROCESSES": "-1"})
    with pytest.raises(InvalidArgument, match=r"server\.processes: must be 0-64"):
        load_settings(env={"GROUNDWIRE_SERVER__PROCESSES": "65"})


def test_several_processes_need_the_local_backend() -> None:
    with pytest.raises(InvalidArgument, match='storage.backend = "milvus": run one server'):
        load_settings(env={**MILVUS, "GROUNDWIRE_SERVER__PROCESSES": "2"})
    assert resolved_processes(load_settings(env=MILVUS)) == 1  # 0 (auto) with Milvus


def test_zero_means_one_per_available_core() -> None:
    assert resolved_processes(load_settings(env={})) == available_cores()
    assert resolved_processes(load_settings(env={"GROUNDWIRE_SERVER__PROCESSES": "3"})) == 3


@pytest.mark.parametrize(
    ("cpu_max", "expected"),
    [("max 100000\n", None), ("150000 100000\n", 2), ("50000 100000\n", 1), ("garbage", None)],
    ids=["no-quota", "one-and-a-half", "half", "unreadable"],
)
def test_a_cgroup_quota_caps_the_cores(tmp_path: Path, cpu_max: str, expected: int | None) -> None:
    path = tmp_path / "cpu.max"
    path.write_text(cpu_max)
    affinity = available_cores(tmp_path / "absent")
    assert available_cores(path) == (affinity if expected is None else min(affinity, expected))


def test_port_zero_resolves_to_a_free_port_that_stays_bindable() -> None:
    port = reserve_shared_port("127.0.0.1", 0)
    assert port > 0
    with socket.socket() as again:
        again.bind(("127.0.0.1", port))


def test_a_port_someone_listens_on_is_refused() -> None:
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # even one that shares
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=rf"could not bind 127.0.0.1:{port} .*server\.port"):
            reserve_shared_port("127.0.0.1", port)


@pytest.mark.parametrize(
    ("configured", "processes", "cores", "expected"),
    [
        (0, 1, 2, 2),  # one process: every core
        (0, 2, 2, 1),  # one process per core: one thread each, not two
        (0, 3, 16, 5),  # the cores shared, rounded down
        (0, 4, 2, 1),  # more processes than cores: still one each
        (3, 2, 2, 3),  # a configured count is kept
    ],
)
def test_the_query_model_gets_its_process_share_of_the_cores(
    configured: int, processes: int, cores: int, expected: int
) -> None:
    assert query_model_threads(configured, processes, cores) == expected
    assert query_model_threads(0, 1) == available_cores()


@pytest.mark.parametrize(
    ("env", "processes", "cores", "expected"),
    [
        ({}, 1, 2, 2),  # one process: a thread per core
        ({}, 2, 2, 1),  # one process per core: one thread each, not the 8 worker threads
        ({}, 3, 16, 5),  # the cores shared, rounded down
        ({"GROUNDWIRE_SERVER__RETRIEVAL_THREADS": "3"}, 2, 2, 3),  # a configured count is kept
        (MILVUS, 1, 2, 8),  # searches wait on the network: the worker threads
        ({**MILVUS, "GROUNDWIRE_SERVER__WORKER_THREADS": "12"}, 1, 2, 12),
    ],
)
def test_retrieval_gets_its_process_share_of_the_cores(
    env: dict[str, str], processes: int, cores: int, expected: int
) -> None:
    assert retrieval_threads(load_settings(env=env), processes, cores) == expected


def test_a_negative_retrieval_thread_count_names_the_setting() -> None:
    with pytest.raises(InvalidArgument, match=r"server\.retrieval_threads: must be >= 0 \(0: the"):
        load_settings(env={"GROUNDWIRE_SERVER__RETRIEVAL_THREADS": "-1"})
