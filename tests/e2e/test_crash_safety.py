"""kill -9 the real server while it ingests; after each restart every acknowledged document is
there, nothing half-written is visible, and both derived indexes agree with the SQLite store."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc

ROUNDS = int(os.environ.get("CRASH_TEST_ROUNDS", "20"))
LISTENING = re.compile(r"groundwire listening on [\d.]+:(\d+)")
PARAGRAPHS = 3


def _document(name: str) -> common.Document:
    body = "\n\n".join(
        f"Paragraph {i} of {name} records codeword zq{name}p{i} for the audit."
        for i in range(PARAGRAPHS)
    )
    return common.Document(document_id=f"{name}.md", text=f"# Record {name}\n\n{body}\n")


def _start(data_dir: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    env = {
        **os.environ,
        "GROUNDWIRE_MODEL__DEVICE": "cpu",
        "GROUNDWIRE_STORAGE__SEED_DEMO_CORPUS": "false",
    }
    with log.open("w") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "server", "serve", "--port", "0", "--data-dir", str(data_dir)],
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        return process, _wait_serving(process, log)
    except BaseException:
        process.kill()
        process.wait(timeout=30)
        raise


def _wait_serving(process: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + 120
    while not (match := LISTENING.search(log.read_text())):
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    target = f"127.0.0.1:{match.group(1)}"
    with grpc.insecure_channel(target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                status = health.Check(health_pb2.HealthCheckRequest(), timeout=2).status
                if status == health_pb2.HealthCheckResponse.SERVING:
                    return target
            except grpc.RpcError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)


def _ingest_until_killed(
    target: str, round_no: int, acknowledged: list[str], stop: threading.Event
) -> None:
    with grpc.insecure_channel(target) as channel:
        stub = ix_grpc.IndexServiceStub(channel)
        i = 0
        while not stop.is_set():
            doc = _document(f"r{round_no}d{i}")
            try:
                stub.UpsertDocuments(
                    iter([ix.UpsertDocumentsRequest(collection="crash", documents=[doc])]),
                    timeout=30,
                )
            except grpc.RpcError:
                return  # the server died before acknowledging: this document may or may not exist
            acknowledged.append(doc.document_id)
            i += 1


def _check(target: str, acknowledged: list[str]) -> None:
    with grpc.insecure_channel(target) as channel:
        index, retrieval = ix_grpc.IndexServiceStub(channel), rs_grpc.RetrievalServiceStub(channel)
        stats = index.Stats(ix.StatsRequest(collection="crash"), timeout=30)
        assert stats.dense_sequence == stats.lexical_sequence == stats.sequence
        assert stats.dense_vectors == stats.collection.chunk_count
        assert (
            stats.collection.chunk_count == stats.collection.document_count
        )  # short docs pack into one chunk
        assert stats.collection.document_count >= len(acknowledged)
        for document_id in acknowledged:
            got = index.GetDocument(
                ix.GetDocumentRequest(collection="crash", document_id=document_id), timeout=30
            )
            name = document_id.removesuffix(".md")
            assert len(got.chunks) == 1, document_id
            assert all(f"zq{name}p{i}" in got.chunks[0].text for i in range(PARAGRAPHS)), (
                document_id
            )
        for document_id in random.sample(acknowledged, min(5, len(acknowledged))):
            name = document_id.removesuffix(".md")
            for mode in (rs.RETRIEVAL_MODE_LEXICAL, rs.RETRIEVAL_MODE_DENSE):
                request = rs.RetrieveRequest(
                    query=f"codeword zq{name}p1", collection="crash", top_k=50
                )
                request.hybrid.mode = mode
                hits = retrieval.Retrieve(request, timeout=30).hits
                found = [h.chunk.chunk_id for h in hits if h.chunk.document_id == document_id]
                assert found or mode == rs.RETRIEVAL_MODE_DENSE, (document_id, mode)


def test_kill_9_never_loses_acknowledged_documents(tmp_path: Path) -> None:
    rng = random.Random(20261123)
    acknowledged: list[str] = []
    process, target = _start(tmp_path / "data", tmp_path / "boot.log")
    try:
        with grpc.insecure_channel(target) as channel:
            ix_grpc.IndexServiceStub(channel).CreateCollection(
                ix.CreateCollectionRequest(name="crash"), timeout=30
            )
        for round_no in range(ROUNDS):
            stop = threading.Event()
            writer = threading.Thread(
                target=_ingest_until_killed, args=(target, round_no, acknowledged, stop)
            )
            writer.start()
            time.sleep(rng.uniform(0.2, 1.5))
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            stop.set()
            writer.join(timeout=60)
            process, target = _start(tmp_path / "data", tmp_path / f"round{round_no}.log")
            _check(target, acknowledged)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    assert len(acknowledged) > ROUNDS, "too few documents were acknowledged to test anything"
