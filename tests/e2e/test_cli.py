"""The `groundwire` command end to end: serve as a subprocess, index, query, SIGTERM, restart."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.unit.test_pdf_parser import make_pdf

LISTENING = re.compile(r"groundwire listening on [\d.]+:(\d+)")
CLI = [sys.executable, "-m", "server"]


class ServeProcess:
    """`groundwire serve --port 0` in a subprocess; its log is collected in a file."""

    def __init__(self, data_dir: Path, log: Path) -> None:
        env = {
            **os.environ,
            "GROUNDWIRE_MODEL__DEVICE": "cpu",
            "GROUNDWIRE_SERVER__SHUTDOWN_GRACE_S": "2",
            "GROUNDWIRE_SERVER__PROCESSES": "1",  # tests run one process unless they ask
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


def _summary(stdout: str) -> list[list[str]]:
    """The `groundwire index` summary as whitespace-split lines, times replaced by "T"."""
    return [re.sub(r"\d+\.\d", "T", line).split() for line in stdout.splitlines()]


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
    assert (
        _summary(result.stdout)[0]
        == (
            "indexed 2 files into 'runbooks' in Ts: 2 upserted, 0 unchanged, 0 failed; "
            "2 chunks (T chunks/s)"
        ).split()
    )
    assert "indexing into" not in result.stderr  # no progress bar when stderr is not a terminal
    again = _cli(
        "index", str(tmp_path / "runbooks"), "--collection", "runbooks", "--target", served.target
    )
    assert "2 files into 'runbooks'" in again.stdout
    assert "0 upserted, 2 unchanged, 0 failed; 0 chunks" in again.stdout
    query = _cli("query", "zebra queue", "--collection", "runbooks", "--target", served.target)
    assert query.returncode == 0, query.stderr
    assert query.stdout.lstrip().startswith("1.") and "restart.md#0" in query.stdout.splitlines()[0]


def _mixed_folder(root: Path) -> Path:
    """Markdown, text, HTML, a PDF, a corrupt PDF, unsupported and hidden files."""
    folder = root / "mixed"
    for sub in ("guide", "site", "reports", ".cache"):
        (folder / sub).mkdir(parents=True)
    (folder / "guide" / "intro.md").write_text(
        "# Deployment guide\n\n## Rollout\n\nRoll the canary out to five percent of hosts.\n\n"
        "## Rollback\n\nRoll back by redeploying the previous image tag.\n"
    )
    (folder / "notes.txt").write_text("The heron backup runs nightly and is kept for a week.\n")
    (folder / "site" / "status.html").write_text(
        "<html><head><title>Status</title></head><body><h1>Status page</h1><h2>Incidents</h2>"
        "<p>Report an outage to <a href='http://203.0.113.7/report'>the on-call engineer</a>."
        "</p></body></html>"
    )
    pdf = make_pdf([["Quarterly report, page one."], ["Page two lists the kestrel budget."]])
    (folder / "reports" / "q3.pdf").write_bytes(pdf)
    (folder / "reports" / "broken.pdf").write_bytes(pdf[: len(pdf) // 2])
    (folder / "logo.png").write_bytes(b"\x89PNG")
    (folder / "Makefile").write_text("all:\n")
    (folder / ".cache" / "stale.md").write_text("# Stale\n\nNever indexed.\n")
    return folder


BROKEN_PDF_ERROR = (
    "documents.content: document 'reports/broken.pdf' is not a readable PDF (corrupt or "
    "truncated); re-export the file and send it again"
)


def test_index_a_mixed_folder_prints_a_per_format_summary(
    served: ServeProcess, tmp_path: Path
) -> None:
    folder = _mixed_folder(tmp_path)
    args = ("index", str(folder), "--collection", "mixed", "--target", served.target)
    result = _cli(*args)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == "error: 1 of 5 documents failed; see the list above"
    assert _summary(result.stdout) == [
        line.split()
        for line in [
            "indexed 5 files into 'mixed' in Ts: 4 upserted, 0 unchanged, 1 failed; "
            "6 chunks (T chunks/s)",
            "format files upserted unchanged failed chunks seconds chunks/s risk flags",
            "markdown 1 1 0 0 2 T T -",
            "text 1 1 0 0 1 T T -",
            "html 1 1 0 0 1 T T suspicious_links 1",
            "pdf 2 1 0 1 2 T T -",
            "total 5 4 0 1 6 T T suspicious_links 1",
            "skipped 2 files with an unsupported extension: (none) 1, .png 1",
            "failed document:",
            f"  reports/broken.pdf: {BROKEN_PDF_ERROR}",
        ]
    ]
    again = _cli(*args)
    assert (
        _summary(again.stdout)[0]
        == (
            "indexed 5 files into 'mixed' in Ts: 0 upserted, 4 unchanged, 1 failed; "
            "0 chunks (T chunks/s)"
        ).split()
    )
    query = _cli("query", "kestrel budget", "--collection", "mixed", "--target", served.target)
    assert "reports/q3.pdf#1" in query.stdout.splitlines()[0]


def _cli_on_a_terminal(*args: str) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal; returns (exit status, terminal output)."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 24x100
    process = subprocess.Popen([*CLI, *args], stdout=subprocess.DEVNULL, stderr=terminal)
    os.close(terminal)
    output = bytearray()
    while True:
        try:
            data = os.read(controller, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        output += data
    os.close(controller)
    return process.wait(timeout=300), output.decode(errors="replace")


def test_progress_bar_on_a_terminal_unless_switched_off(
    served: ServeProcess, tmp_path: Path
) -> None:
    folder = tmp_path / "bar"
    folder.mkdir()
    for i in range(3):
        (folder / f"note{i}.md").write_text(f"# Note {i}\n\nThe osprey count is {i}.\n")
    args = ("index", str(folder), "--collection", "bar", "--target", served.target)
    code, terminal = _cli_on_a_terminal(*args)
    assert code == 0, terminal
    assert "indexing into bar: 100%" in terminal and "3/3" in terminal
    code, terminal = _cli_on_a_terminal(*args, "--no-progress")
    assert code == 0, terminal
    assert "indexing into" not in terminal


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


def test_answer_options_and_json_lines(served: ServeProcess) -> None:
    result = _cli(
        "answer", "Why are Python strings immutable?", "--top-k", "2", "--mode", "dense",
        "--template", "qa", "--max-tokens", "64", "--json", "--target", served.target,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert list(events[0]) == ["started"] and list(events[-1]) == ["summary"]
    assert all(list(event) == ["delta"] for event in events[1:-1]) and len(events) > 2
    started = events[0]["started"]
    assert started["template"] == "qa"
    assert started["retrieval"]["mode"] == "RETRIEVAL_MODE_DENSE"
    assert len(started["retrieval"]["hits"]) == 2
    text = "".join(event["delta"]["text"] for event in events[1:-1])
    assert text == events[-1]["summary"]["text"]
    assert events[-1]["summary"]["citations"][0]["documentId"] == "faq-design"


def test_answer_errors_name_the_field(served: ServeProcess) -> None:
    result = _cli("answer", "anything", "--template", "nope", "--target", served.target)
    assert result.returncode == 1
    assert result.stderr.startswith(
        "error: INVALID_ARGUMENT: template: unknown template 'nope'; installed: "
    )


def test_help_describes_every_option() -> None:
    result = _cli("answer", "--help")
    assert result.returncode == 0
    words = " ".join(result.stdout.split())
    assert "--max-tokens MAX_TOKENS most tokens to generate (default: the generator's)" in words
    assert "--top-k TOP_K number of hits to retrieve (default: the server's, 10)" in words


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
        "whole-section baseline",
        "dense, section weight 0 (chunks only)",
        "dense, section weight 0.25",
        "dense, section weight 0.75",
        "dense, section weight 1",
        "dense",
        "lexical",
        "hybrid",
        "hybrid-weighted-equal",
        "hybrid-rrf-bm25-0.25",
        "hybrid-dbsf-bm25-0.25",
        "hybrid-max",
        "hybrid-dbsf",
        "old default (chunks only, weighted bm25 0.25)",
        "default + expansion (smart)",
        "default",
        "default, lexical candidates scored",
    }
    assert report["results"]["dense"] == {"mrr@10": 1.0, "recall@10": 1.0, "ndcg@10": 1.0}
    assert report["results"]["whole-section baseline"]["recall@10"] == 1.0
    assert report["source_type"] == "text"
    markdown = _cli("eval", "--dataset", str(dataset), "--json", "--markdown")
    assert markdown.returncode == 0, markdown.stderr
    assert json.loads(markdown.stdout)["source_type"] == "markdown"
    table = _cli("eval", "--dataset", str(dataset))
    assert table.stdout.splitlines()[0].split("|")[1:-1] == [
        " configuration ",
        " MRR@10 ",
        " Recall@10 ",
        " nDCG@10 ",
        " ΔMRR@10 ",
        " ΔR@10 ",
    ]
