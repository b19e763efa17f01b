"""benchmarks/ghz: the ghz report parser (on a real report), cores busy from /proc, the request
files ghz reads, the index key and the quick subset, per-thread CPU from /proc, perf's samples
by object and thread, the runtimes A/B table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchmarks.ghz.cores_busy import CpuSample, cores_busy, cpu_seconds, parse_stat, tree_cpu_ticks
from benchmarks.ghz.faq_index import DEFAULT_DATASET, code_version, subset_ids
from benchmarks.ghz.ghz_runs import Load, ghz_command
from benchmarks.ghz.ghz_summary import summarize
from benchmarks.ghz.request_files import (
    ANSWER,
    RETRIEVE,
    WORKLOADS,
    load_questions,
    requests_for,
    write_data_file,
)
from benchmarks.ghz.runtimes import markdown
from benchmarks.ghz.served_native_profile import read_script
from benchmarks.ghz.served_native_profile import split as perf_split
from benchmarks.ghz.thread_cpu import DUMP_THREAD, group_of, thread_cpu

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ghz" / "retrieve-dense-c2-k1.json"
PYTHON_FAQ = DEFAULT_DATASET
needs_faq = pytest.mark.skipif(not PYTHON_FAQ.is_dir(), reason="python-faq data set not available")


def test_summary_of_a_real_ghz_report_matches_its_details() -> None:
    report = json.loads(FIXTURE.read_text())
    row = summarize(report)
    details = report["details"]
    ok = [d for d in details if d["status"] == "OK"]
    assert row["calls"] == report["count"] == len(details)
    assert row["ok"] == len(ok)
    assert row["errors"] == len(details) - len(ok)
    assert row["ok_rps"] == round(len(ok) / (report["total"] / 1e9), 2)
    assert row["rps"] == round(report["rps"], 2)
    by_percent = {e["percentage"]: e["latency"] / 1e6 for e in report["latencyDistribution"]}
    assert row["p50_ms"] == round(by_percent[50], 1)
    assert row["p99_ms"] == round(by_percent[99], 1)
    assert row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"]
    assert min(d["latency"] for d in details) / 1e6 <= row["p50_ms"]


def test_summary_of_a_run_where_every_call_failed() -> None:
    report = {
        "count": 3,
        "total": 2_000_000_000,
        "average": 5_000_000,
        "rps": 1.5,
        "statusCodeDistribution": {"Unavailable": 3},
        "errorDistribution": {"rpc error: code = Unavailable": 3},
        "latencyDistribution": None,
    }
    row = summarize(report)
    assert (row["ok"], row["errors"], row["ok_rps"]) == (0, 3, 0.0)
    assert row["p50_ms"] is None and row["p99_ms"] is None


def test_parse_stat_with_spaces_and_parentheses_in_the_command_name() -> None:
    line = "4242 (python (x) y) S 17 4242 4242 0 -1 4194560 1 2 3 4 150 25 7 3 20 0 9 0 100"
    fields = parse_stat(line)
    assert (fields.pid, fields.ppid) == (4242, 17)
    assert fields.name == "python (x) y"
    assert (fields.utime, fields.stime, fields.cutime, fields.cstime) == (150, 25, 7, 3)


def test_tree_cpu_counts_live_descendants_and_not_unrelated_processes() -> None:
    stats = {
        10: parse_stat("10 (server) S 1 0 0 0 0 0 0 0 0 0 100 50 5 5"),
        11: parse_stat("11 (worker) S 10 0 0 0 0 0 0 0 0 0 30 10 0 0"),
        12: parse_stat("12 (grandchild) S 11 0 0 0 0 0 0 0 0 0 1 1 0 0"),
        13: parse_stat("13 (other) S 1 0 0 0 0 0 0 0 0 0 999 999 0 0"),
    }
    assert tree_cpu_ticks(stats, 10) == 160 + 40 + 2
    assert tree_cpu_ticks(stats, 99) == 0


def test_cpu_seconds_of_a_real_child_that_spins_include_its_own_child() -> None:
    spin = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    parent_code = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {spin!r} + 'time.sleep(60)'])\n"
        f"exec({spin!r})\n"
        "print('spun', flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE)
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == b"spun"
        # both spun 0.3 s of CPU; the child may still be finishing its share, so wait for it
        for _ in range(200):
            if cpu_seconds(parent.pid) >= 0.55:
                break
            subprocess.run(["sleep", "0.05"], check=True)
        assert cpu_seconds(parent.pid) >= 0.55
    finally:
        for proc in subprocess.run(
            ["pgrep", "-P", str(parent.pid)], capture_output=True, text=True
        ).stdout.split():
            subprocess.run(["kill", proc], check=False)
        parent.kill()
        parent.wait()


def test_cores_busy_is_cpu_over_wall() -> None:
    assert cores_busy(CpuSample(10.0, 100.0), CpuSample(13.0, 102.0)) == 1.5
    with pytest.raises(ValueError, match="in order"):
        cores_busy(CpuSample(10.0, 100.0), CpuSample(10.0, 100.0))


@needs_faq
def test_request_files_cycle_every_question_per_workload(tmp_path: Path) -> None:
    questions = load_questions(PYTHON_FAQ)
    assert len(questions) == 172
    by_name = {w.name: w for w in WORKLOADS}
    dense = requests_for(by_name["retrieve-dense"], questions, "python-faq")
    default = requests_for(by_name["retrieve-default"], questions, "python-faq")
    answer = requests_for(by_name["answer-extractive"], questions, "python-faq")
    assert [r["query"] for r in dense] == questions
    assert dense[0] == {
        "query": questions[0],
        "collection": "python-faq",
        "topK": 10,
        "hybrid": {"mode": "RETRIEVAL_MODE_DENSE"},
    }
    assert "hybrid" not in default[0]
    one_each = requests_for(by_name["retrieve-default"], questions, "python-faq", 10, 1)
    assert one_each[0] == {**default[0], "maxHitsPerDocument": 1}
    assert answer[5] == {"retrieve": default[5]}
    assert (
        by_name["answer-extractive"].call == ANSWER and by_name["retrieve-dense"].call == RETRIEVE
    )
    written = write_data_file(tmp_path / "d" / "dense.json", dense)
    assert json.loads(written.read_text()) == dense
    with pytest.raises(ValueError, match="at least one request"):
        write_data_file(tmp_path / "empty.json", [])


def test_ghz_command_uses_the_repository_proto_and_the_rate_when_set(tmp_path: Path) -> None:
    load = Load(concurrency=8, connections=4, duration_s=30, rps=55)
    command = ghz_command(
        Path("/bin/ghz"),
        "127.0.0.1:1234",
        RETRIEVE,
        tmp_path / "d.json",
        load,
        tmp_path / "o",
        {"authorization": "Bearer k"},
    )
    assert command[-1] == "127.0.0.1:1234"
    flags = dict(zip(command[1:-1:1], command[2:-1:1], strict=False))
    assert flags["--concurrency"] == "8" and flags["--connections"] == "4"
    assert flags["--rps"] == "55" and flags["--duration"] == "30s"
    assert flags["--format"] == "json" and flags["--call"] == RETRIEVE
    assert Path(flags["--proto"]).is_file()
    assert json.loads(flags["--metadata"]) == {"authorization": "Bearer k"}
    unlimited = ghz_command(Path("g"), "t", RETRIEVE, Path("d"), Load(1, 1, 5), Path("o"))
    assert "--rps" not in unlimited and "--metadata" not in unlimited


@needs_faq
def test_quick_subset_holds_every_judged_section_in_corpus_order() -> None:
    ids = subset_ids(PYTHON_FAQ, 600)
    everything = subset_ids(PYTHON_FAQ, None)
    assert len(ids) == 600 and len(everything) == 5093
    judged = {
        line.split("\t")[1]
        for line in (PYTHON_FAQ / "qrels" / "test.tsv").read_text().splitlines()[1:]
    }
    assert judged <= set(ids)
    assert ids == [doc_id for doc_id in everything if doc_id in set(ids)]


def test_code_version_names_the_core_tree() -> None:
    version = code_version()
    assert len(version.split("-")[0]) == 12


def test_thread_cpu_reads_every_thread_of_a_process_with_its_name() -> None:
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: stop.wait(5), name="spinner")
    spinner.start()
    try:
        threads = thread_cpu(os.getpid())
    finally:
        stop.set()
        spinner.join()
    assert threading.get_native_id() in threads
    assert spinner.native_id in threads
    for name, user, system in threads.values():
        assert name and user >= 0.0 and system >= 0.0


def test_thread_groups_merge_the_pools_and_keep_other_names() -> None:
    assert group_of("gw-work_3") == "worker pool (gw-work)"
    assert group_of("gw-retrieve_0") == "retrieval pool (gw-retrieve)"
    assert group_of("gw-lexical_0") == "lexical pool (gw-lexical)"
    assert group_of("query-micro-batcher") == "query-micro-batcher"
    dump = 'Thread 4242 (idle): "gw-work_0"\n    _worker (thread.py:81)\nThread 17 (active): "MainThread"'
    assert dict((int(t), n) for t, n in DUMP_THREAD.findall(dump)) == {
        4242: "gw-work_0",
        17: "MainThread",
    }


PERF_SCRIPT = """\
   9228            fb65a (/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0)
   9210          10e5222 (/work/.venv/lib/python3.11/site-packages/onnxruntime/capi/onnxruntime_pybind11_state.cpython-311-x86_64-linux-gnu.so)
   9210 ffffffffa1c2e6b0 ([kernel.kallsyms])
"""


def test_perf_samples_count_where_each_ran_per_thread() -> None:
    samples = read_script(PERF_SCRIPT)
    assert samples == [
        (9228, "libpython3.11.so.1.0"),
        (9210, "onnxruntime_pybind11_state.so"),
        (9210, "[kernel.kallsyms]"),
    ]
    record = perf_split(samples, {9210: "query-micro-batcher"}, cpu_ms_per_call=6.0)
    assert record["objects"][0] == {
        "name": "libpython3.11.so.1.0",
        "share": 0.3333,
        "ms_per_call": 2.0,
    }
    batcher = record["threads"][0]
    assert batcher["name"] == "query-micro-batcher (9210)" and batcher["ms_per_call"] == 4.0
    assert [o["name"] for o in batcher["top"]] == [
        "onnxruntime_pybind11_state.so",
        "[kernel.kallsyms]",
    ]
    assert record["threads"][1]["name"] == "? (9228)"


def test_runtimes_table_shows_a_variant_whose_every_call_failed() -> None:
    def row(variant: str, ok_rps: float, p50: float | None, errors: int) -> dict[str, object]:
        return {
            "variant": variant,
            "workload": "retrieve-default",
            "concurrency": 8,
            "ok_rps": ok_rps,
            "p50_ms": p50,
            "p99_ms": None if p50 is None else 2 * p50,
            "errors": errors,
            "server_cores_busy": 1.5,
            "load_1m_after": 2.0,
        }

    record = {
        "machine": {"date": "2026-12-03T00:00:00Z", "commit": "abc", "cores": 2},
        "ghz": "ghz 0.120.0",
        "corpus": {"documents": 10, "chunks": 40},
        "connections": 4,
        "duration_s": 6.0,
        "rounds": 2,
        "uptime_before": "up",
        "uptime_after": "up",
        "variants": {},
        "rows": [row("a", 100.0, 40.0, 0), row("a", 120.0, 30.0, 0)]
        + [row("b", 0.0, None, 831), row("b", 0.0, None, 800)],
    }
    text = markdown(record, ["a", "b"], [8], ["retrieve-default"])
    assert "| retrieve-default | 8 | a | 110.0 (100 / 120) | 35.0 | 70.0 | 0 | 1.50 |" in text
    assert "| retrieve-default | 8 | b | 0.0 (0 / 0) | - | - | 1631 | 1.50 |" in text
