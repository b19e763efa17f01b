"""benchmarks/peers/load_driver: the metrics, percentiles and the threaded load loop."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.peers.load_driver import percentile, recall_mrr, throughput


def test_recall_and_mrr_at_10() -> None:
    qrels = {"q1": {"a"}, "q2": {"b", "c"}, "q3": {"z"}}
    run = {"q1": ["x", "a"], "q2": ["c"] + [f"n{i}" for i in range(9)] + ["b"]}
    metrics = recall_mrr(run, qrels)
    # q1: found at rank 2; q2: one of two within 10, first at rank 1; q3: no ranking at all
    assert metrics["recall@10"] == round((1 + 0.5 + 0) / 3, 4)
    assert metrics["mrr@10"] == round((0.5 + 1 + 0) / 3, 4)


def test_nearest_rank_percentile() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile([7.0], 0.99) == 7.0


def test_throughput_runs_every_thread_and_counts_errors() -> None:
    seen: set[int] = set()
    lock = threading.Lock()

    def search(text: str) -> Sequence[str]:
        with lock:
            seen.add(threading.get_ident())
        if text == "bad":
            raise RuntimeError("boom")
        return [text]

    result = throughput(search, ["good", "bad"], threads=4, duration_s=0.3)
    assert len(seen) == 4
    assert result["threads"] == 4
    assert result["errors"] > 0
    assert result["calls"] > 0  # the "good" half
    assert result["p50_ms"] is not None and result["p50_ms"] <= result["p99_ms"]


def test_throughput_reports_the_cores_its_own_process_kept_busy() -> None:
    def spin(text: str) -> Sequence[str]:
        deadline = time.process_time() + 0.005
        while time.process_time() < deadline:
            pass
        return [text]

    busy = throughput(spin, ["q"], threads=1, duration_s=0.3)["driver_cores_busy"]
    idle = throughput(lambda text: time.sleep(0.005) or [text], ["q"], 1, 0.3)
    assert 0.5 < busy <= 2.5  # one thread spinning: about one core (the machine has two)
    assert idle["driver_cores_busy"] < busy


def test_throughput_with_a_search_that_always_fails_has_no_latencies() -> None:
    def search(text: str) -> Sequence[str]:
        raise ValueError(text)

    result = throughput(search, ["q"], threads=1, duration_s=0.1)
    assert result["errors"] > 0
    assert result["p50_ms"] is None
    assert result["qps"] == 0.0


def test_peer_driver_refuses_an_unknown_system_before_loading_anything(tmp_path: Path) -> None:
    driver = Path(__file__).resolve().parents[2] / "benchmarks" / "peers" / "peer_driver.py"
    arguments = ["--dataset", "d", "--ids-file", "i", "--cache", "c", "--work-dir", "w"]
    done = subprocess.run(
        [sys.executable, str(driver), *arguments, "--out", str(tmp_path / "out.json")]
        + ["--systems", "chroma-embedded,milvus"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "unknown systems ['milvus']; choose from chroma-embedded, chroma-http, lancedb" in (
        done.stderr
    )
    assert not (tmp_path / "out.json").exists()
