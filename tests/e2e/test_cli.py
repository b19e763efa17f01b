"""The `groundwire` command end to end: serve as a subprocess, index, query, SIGTERM, restart."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

LISTENING = re.compile(r"groundwire listening on [\d.]+:(\d+)")
CLI = [sys.executable, "-m", "server"]


class ServeProcess:
    """`groundwire serve --port 0` in a subprocess; its log is collected in a file."""

    def __init__(self, data_dir: Path, log: Path) -> None:
        env = {
            **os.environ,
            "GROUNDWIRE_MODEL__DEVICE": "cpu",
            "GROUNDWIRE_SERVER__SHUTDOWN_GRACE_S": "2",
        }
        self.log_path = log
        self._log = log.open("w")
        self.process = subprocess.Popen(
            [*CLI, "serve", "--port", "0", "--data-dir", str(data_dir)],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self.port = self._wait_for(LISTENING, 120)
        self.target = f"127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text()

    def _wait_for(self, pattern: re.Pattern[str], timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = pattern.search(self.log())
            if match:
                return int(match.group(1))
            assert self.process.poll() is None, f"server exited early:\n{self.log()}"
            time.sleep(0.2)
        raise AssertionError(f"no {pattern.pattern!r} in the log:\n{self.log()}")

    def wait_serving(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        with grpc.insecure_channel(self.target) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                try:
                    if (
                        stub.Check(health_pb2.HealthCheckRequest(), timeout=5).status
                        == health_pb2.HealthCheckResponse.SERVING
                    ):
                        return
                except grpc.RpcError:
                    pass
                time.sleep(0.5)
        raise AssertionError(f"never SERVING:\n{self.log()}")

    def terminate(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=60)
        self._log.close()
        return code


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve-data")


@pytest.fixture(scope="module")
def served(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    server = ServeProcess(data_dir, tmp_path_factory.mktemp("logs") / "serve.log")
    server.wait_serving()
    yield server
    if server.process.poll() is None:
        server.terminate()


def test_embedded_default_answers_a_first_query(served: ServeProcess) -> None:
    assert "embedding device: cpu" in served.log()
    assert "indexing 6 demo documents" in served.log()
    result = _cli("query", "Why are Python strings immutable?", "--json", "--target", served.target)
    assert result.returncode == 0, result.stderr
    response = json.loads(result.stdout)
    assert response["hits"][0]["chunk"]["sectionPath"][-1] == "Why are Python strings immutable?"


def test_index_a_folder_then_query_it(served: ServeProcess, tmp_path: Path) -> None:
    (tmp_path / "runbooks").mkdir()
    (tmp_path / "runbooks" / "restart.md").write_text(
        "# Restarts\n\n## Draining\n\nDrain the zebra queue before a restart.\n"
    )
    (tmp_path / "runbooks" / "notes.txt").write_text(
        "Backups run nightly at 02:00 and are kept for seven days.\n"
    )
    (tmp_path / "runbooks" / "image.png").write_bytes(b"\x89PNG")
    result = _cli(
        "index", str(tmp_path / "runbooks"), "--collection", "runbooks", "--target", served.target
    )
    assert result.returncode == 0, result.stderr
    assert "2 files in" in result.stdout and "2 upserted, 0 unchanged, 0 failed" in result.stdout
    assert "by format: markdown 1, text 1" in result.stdout
    again = _cli(
        "index", str(tmp_path / "runbooks"), "--collection", "runbooks", "--target", served.target
    )
    assert "0 upserted, 2 unchanged, 0 failed" in again.stdout
    query = _cli("query", "zebra queue", "--collection", "runbooks", "--target", served.target)
    assert query.returncode == 0, query.stderr
    assert query.stdout.lstrip().startswith("1.") and "restart.md#0" in query.stdout.splitlines()[0]


def test_query_errors_are_reported_with_status(served: ServeProcess) -> None:
    result = _cli("query", "   ", "--target", served.target)
    assert result.returncode != 0
    assert (
        "error: INVALID_ARGUMENT: query: must not be empty or whitespace; send the question text"
        in result.stderr
    )


def test_answer_streams_a_cited_answer_with_no_configuration(served: ServeProcess) -> None:
    result = _cli("answer", "Why are Python strings immutable?", "--target", served.target)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Extractive answer (no language model configured)")
    assert "[DOC:faq-design | CHUNK:faq-design#" in result.stdout
    assert "faithfulness 1.00" in result.stdout


def test_sigterm_shuts_down_gracefully_and_data_survives_a_restart(
    served: ServeProcess, data_dir: Path, tmp_path: Path
) -> None:
    assert served.terminate() == 0
    assert "signal received: shutting down" in served.log() and "stopped" in served.log()
    restarted = ServeProcess(data_dir, tmp_path / "restart.log")
    try:
        restarted.wait_serving()
        assert "indexing 6 demo documents" not in restarted.log()
        result = _cli(
            "query", "zebra queue", "--collection", "runbooks", "--target", restarted.target
        )
        assert "restart.md#0" in result.stdout.splitlines()[0]
    finally:
        assert restarted.terminate() == 0


def test_unreachable_server_is_a_clear_error() -> None:
    result = _cli("query", "anything", "--target", "127.0.0.1:1")
    assert result.returncode != 0
    assert (
        "cannot reach a groundwire server at 127.0.0.1:1; start one with `groundwire serve`"
        in result.stderr
    )


def test_eval_prints_metrics_for_every_configuration(tmp_path: Path) -> None:
    dataset = tmp_path / "mini"
    (dataset / "qrels").mkdir(parents=True)
    docs = {
        "d1": (
            "Strings",
            "Python strings are immutable: once created, their characters never change.",
        ),
        "d2": (
            "Copying",
            "Use copy.copy for a shallow copy and copy.deepcopy for a deep copy of an object.",
        ),
        "d3": ("Files", "Open a file with open() and iterate over it to read it line by line."),
        "d4": (
            "Lambdas",
            "A lambda is a small anonymous function defined with the lambda keyword.",
        ),
    }
    (dataset / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": t, "text": x}) + "\n" for k, (t, x) in docs.items())
    )
    queries = {
        "q1": "Why can't I change a string?",
        "q2": "How do I duplicate an object?",
        "q3": "read a file line by line",
    }
    (dataset / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items())
    )
    (dataset / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\n"
    )
    result = _cli("eval", "--dataset", str(dataset), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report["results"]) == {
        "dense",
        "lexical",
        "hybrid",
        "hybrid-weighted",
        "hybrid-max",
        "hybrid-dbsf",
        "default",
    }
    assert report["results"]["dense"] == {"mrr@10": 1.0, "recall@10": 1.0, "ndcg@10": 1.0}
    table = _cli("eval", "--dataset", str(dataset))
    assert table.stdout.splitlines()[0].split() == [
        "configuration",
        "mrr@10",
        "recall@10",
        "ndcg@10",
    ]
