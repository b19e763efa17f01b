"""Retrieve end to end through a real groundwire gRPC server on loopback, many concurrent clients.

The server runs in this process (`server.app.create_server(settings)` on port 0, on its own event
loop thread, as tests/server_harness.py does); clients run in separate processes (retrieve_client.py:
grpc.aio, many calls in flight each) so client work does not share the server's interpreter.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import grpc

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from server.app import GroundwireServer, create_server
from server.settings import Settings

CLIENT = Path(__file__).with_name("retrieve_client.py")


class LoopbackServer:
    """`create_server(settings)` started on a background event loop; `stop()` shuts it down."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.server: GroundwireServer | None = None
        self.port = 0

    @property
    def target(self) -> str:
        """host:port to dial."""
        return f"127.0.0.1:{self.port}"

    def _call(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(1800)

    def start(self) -> LoopbackServer:
        """Bind, serve, and wait until the model and indexes are loaded."""
        self._thread.start()

        async def boot() -> None:
            self.server, self.port = create_server(self._settings)
            await self.server.start(load=False)
            await self.server.wait_until_ready()

        self._call(boot())
        return self

    def stop(self) -> None:
        """Graceful stop, then end the loop thread."""
        if self.server is not None:
            self._call(self.server.stop(grace=1.0))
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)


COLLECTION = "bench"


def upsert_sections(target: str, corpus: Path, limit: int) -> int:
    """Create the `COLLECTION` collection and index the first `limit` sections of a BEIR
    corpus.jsonl into it as Markdown; the number of documents sent."""
    documents = []
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            if len(documents) >= limit:
                break
            doc = json.loads(line)
            text = f"# {doc['title']}\n\n{doc['text']}" if doc["title"] else doc["text"]
            documents.append(common.Document(document_id=doc["_id"], text=text))
    messages = [
        ix.UpsertDocumentsRequest(collection=COLLECTION, documents=documents[start : start + 256])
        for start in range(0, len(documents), 256)
    ]
    with grpc.insecure_channel(target) as channel:
        stub = ix_grpc.IndexServiceStub(channel)
        stub.CreateCollection(ix.CreateCollectionRequest(name=COLLECTION), timeout=60)
        stub.UpsertDocuments(iter(messages), timeout=3600)
    return len(documents)


def retrieve_load(
    target: str,
    queries: list[str],
    mode: str,
    concurrency: int,
    processes: int,
    duration_s: float,
) -> dict[str, Any]:
    """Retrieve calls (top 10) from `processes` client processes, `concurrency` in flight in all."""
    processes = max(1, min(processes, concurrency))
    shares = [concurrency // processes + (i < concurrency % processes) for i in range(processes)]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(queries, handle)
    try:
        clients = [
            _start_client(target, Path(handle.name), mode, share, duration_s, i)
            for i, share in enumerate(shares)
        ]
        outcomes = [_finish_client(client, duration_s) for client in clients]
    finally:
        Path(handle.name).unlink()
    latencies = sorted(s for outcome in outcomes for s in outcome["latencies"])
    errors = sum(int(outcome["errors"]) for outcome in outcomes)
    elapsed = max(float(outcome["seconds"]) for outcome in outcomes)
    row: dict[str, Any] = {"mode": mode, "concurrency": concurrency, "errors": errors}
    if latencies:
        row["queries/s"] = round(len(latencies) / elapsed, 1)
        row["p50_ms"] = round(1000 * statistics.median(latencies), 2)
        row["p99_ms"] = round(
            1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 2
        )
        row.update(stage_shares(outcomes, len(latencies)))
    return row


GPU_STAGES = ("embed", "dense")
"""Stages whose work runs on the GPU on a CUDA server (query embedding and dense search)."""


def stage_shares(outcomes: list[dict[str, Any]], calls: int) -> dict[str, Any]:
    """Mean server-side milliseconds per call (sum of its stage timings) and the share of that
    time spent in the GPU stages: the "GPU-side time share" of the Retrieve path."""
    totals: dict[str, float] = {}
    for outcome in outcomes:
        for stage, millis in outcome.get("stages_ms", {}).items():
            totals[stage] = totals.get(stage, 0.0) + float(millis)
    server_ms = sum(totals.values())
    if not server_ms or not calls:
        return {}
    gpu_ms = sum(totals.get(stage, 0.0) for stage in GPU_STAGES)
    return {
        "server_ms/call": round(server_ms / calls, 3),
        "embed_ms/call": round(totals.get("embed", 0.0) / calls, 3),
        "dense_ms/call": round(totals.get("dense", 0.0) / calls, 3),
        "gpu_stages_%": round(100 * gpu_ms / server_ms, 1),
    }


def _start_client(
    target: str, queries: Path, mode: str, concurrency: int, duration_s: float, offset: int
) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        str(CLIENT),
        f"--target={target}",
        f"--queries={queries}",
        f"--mode={mode}",
        f"--concurrency={concurrency}",
        f"--duration={duration_s}",
        f"--offset={offset}",
        f"--collection={COLLECTION}",
    ]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


def _finish_client(client: subprocess.Popen[str], duration_s: float) -> dict[str, Any]:
    stdout, _ = client.communicate(timeout=duration_s + 300)
    if client.returncode != 0:
        raise RuntimeError(f"retrieve client exited with status {client.returncode}")
    outcome: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return outcome
