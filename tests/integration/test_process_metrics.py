"""`groundwire serve --processes 2 --metrics`: the configured metrics port reports both processes.

A real server binary with metrics on a chosen port; many channels, each its own connection,
land on both processes (tests/serving_process.py tells which serves a channel). One scrape of
the configured port, parsed with prometheus_client's parser, holds every process's series
labelled `server_process`, so the Retrieve calls each process handled add up to the calls made,
and a call a reader forwards to the primary is counted once, by the reader.
A reader killed with SIGKILL is left out of the scrapes until it serves again; the readers'
own endpoints listen on loopback only.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections import Counter
from collections.abc import Iterator

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.free_port import free_port
from tests.metric_scrape import Samples, scrape
from tests.serve_subprocess import ServeSubprocess
from tests.serving_process import serving_process

CHANNELS = 12
COLLECTION = "notes"
READY = re.compile(r"reader process 1 ready \(pid (\d+)\)")
HANDLED = "grpc_server_handled_total"
RETRIEVE_OK = {
    "grpc_type": "unary",
    "grpc_service": "groundwire.v1.RetrievalService",
    "grpc_method": "Retrieve",
    "grpc_code": "OK",
}


class Server:
    """The running server, its configured metrics port and its channels."""

    def __init__(self, process: ServeSubprocess, metrics_port: int) -> None:
        self.process = process
        self.metrics_port = metrics_port
        self.channels: list[grpc.Channel] = []

    def scrape(self) -> tuple[str, Samples]:
        """GET the configured metrics port: the text and every sample by (name, labels)."""
        got = scrape(self.metrics_port)
        return got.text, got.samples


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("process-metrics")
    metrics_port = free_port()
    process = ServeSubprocess.start(
        directory / "data",
        directory / "server.log",
        env={
            "GROUNDWIRE_SERVER__PROCESSES": "2",
            "GROUNDWIRE_METRICS__ENABLED": "true",
            "GROUNDWIRE_METRICS__PORT": str(metrics_port),
            "GROUNDWIRE_METRICS__HOST": "0.0.0.0",  # the readers' endpoints stay on loopback
        },
    )
    running = Server(process, metrics_port)
    try:
        for _ in range(CHANNELS):  # a local subchannel pool: each channel its own connection
            channel = grpc.insecure_channel(
                process.target, options=[("grpc.use_local_subchannel_pool", 1)]
            )
            grpc.channel_ready_future(channel).result(timeout=30)
            running.channels.append(channel)
        index = ix_grpc.IndexServiceStub(running.channels[0])
        index.CreateCollection(ix.CreateCollectionRequest(name=COLLECTION))
        document = common.Document(
            document_id="intro", text="Groundwire serves retrieval over gRPC.", source_path="i.md"
        )
        request = ix.UpsertDocumentsRequest(collection=COLLECTION, documents=[document])
        assert index.UpsertDocuments(iter([request])).upserted == 1
        yield running
    finally:
        for channel in running.channels:
            channel.close()
        if process.process.poll() is None:
            process.stop()


def _handled(samples: Samples, process: str) -> float:
    labels = frozenset({**RETRIEVE_OK, "server_process": process}.items())
    return samples.get((HANDLED, labels), 0.0)


def test_one_scrape_of_the_configured_port_counts_the_calls_of_every_process(
    server: Server,
) -> None:
    placement = [
        serving_process(channel, COLLECTION, f"which process am I {n}")
        for n, channel in enumerate(server.channels)
    ]
    assert set(placement) == {0, 1}, f"both processes must serve some channel: {placement}"
    _, before = server.scrape()
    calls = Counter[int]()
    for number, (channel, process) in enumerate(zip(server.channels, placement, strict=True)):
        stub = rs_grpc.RetrievalServiceStub(channel)
        for repeat in range(number % 3 + 1):
            query = f"question {number}.{repeat}"
            reply = stub.Retrieve(rs.RetrieveRequest(query=query, collection=COLLECTION))
            assert reply.hits
            calls[process] += 1
    text, after = server.scrape()

    moved = {p: _handled(after, p) - _handled(before, p) for p in ("0", "1")}
    assert moved == {"0": calls[0], "1": calls[1]}
    assert sum(moved.values()) == sum(calls.values())
    assert _handled(after, "0") > 0 and _handled(after, "1") > 0
    assert after[("groundwire_metrics_processes_scraped", frozenset())] == 2
    # no series without its process; one HELP and TYPE per family
    unlabelled = [
        name
        for name, labels in after
        if name != "groundwire_metrics_processes_scraped" and "server_process" not in dict(labels)
    ]
    assert unlabelled == []
    types = [line for line in text.splitlines() if line.startswith("# TYPE ")]
    assert len(types) == len(set(types))
    assert types.count(f"# TYPE {HANDLED} counter") == 1
    for process in ("0", "1"):  # scrape-time series of both processes are there too
        assert after[("groundwire_ready", frozenset({("server_process", process)}))] == 1


def test_a_call_a_reader_forwards_is_counted_once(server: Server) -> None:
    """ClearCache is served by the primary: a reader forwards it. The reader that received it
    counts it, the primary does not count it again, so the sum over processes is the calls made."""
    placement = [
        serving_process(channel, COLLECTION, f"where is channel {n}")
        for n, channel in enumerate(server.channels)
    ]
    assert set(placement) == {0, 1}, f"both processes must serve some channel: {placement}"
    labels = {**RETRIEVE_OK, "grpc_method": "ClearCache"}

    def handled(samples: Samples, process: str) -> float:
        return samples.get((HANDLED, frozenset({**labels, "server_process": process}.items())), 0)

    _, before = server.scrape()
    for channel in server.channels:
        rs_grpc.RetrievalServiceStub(channel).ClearCache(rs.ClearCacheRequest())
    _, after = server.scrape()
    moved = {p: handled(after, p) - handled(before, p) for p in ("0", "1")}
    assert moved == {"0": placement.count(0), "1": placement.count(1)}


def _embedded(samples: Samples, process: str) -> float:
    """Query texts process `process` embedded so far."""
    return samples.get(
        ("groundwire_embed_batch_size_sum", frozenset({("server_process", process)})), 0
    )


def test_concurrent_calls_on_one_connection_run_in_both_processes(server: Server) -> None:
    """The kernel gives one connection to one process; the calls that arrive on it while that
    process is busier than the other are handed to the other (server/read_balancing.py). Both
    processes embed queries; the process the connection reached counts every call, once."""
    channel = server.channels[0]
    arrived = str(serving_process(channel, COLLECTION, "where does channel 0 land"))
    stub = rs_grpc.RetrievalServiceStub(channel)
    _, before = server.scrape()
    calls = 48
    queries = [f"what does groundwire serve, asked {n} times" for n in range(calls)]
    for wave in range(0, calls, 16):  # 16 at once on the one connection
        pending = [
            stub.Retrieve.future(rs.RetrieveRequest(query=query, collection=COLLECTION))
            for query in queries[wave : wave + 16]
        ]
        replies = [call.result(timeout=60) for call in pending]
        assert all(reply.hits[0].chunk.document_id == "intro" for reply in replies)
    _, after = server.scrape()
    embedded = {p: _embedded(after, p) - _embedded(before, p) for p in ("0", "1")}
    assert embedded["0"] > 0 and embedded["1"] > 0, embedded
    assert sum(embedded.values()) == calls
    other = "1" if arrived == "0" else "0"
    handled = {p: _handled(after, p) - _handled(before, p) for p in ("0", "1")}
    assert handled == {arrived: calls, other: 0}
    handed = frozenset(
        {"grpc_method": "Retrieve", "outcome": "handed", "server_process": arrived}.items()
    )
    name = "groundwire_handed_over_calls_total"
    assert after[(name, handed)] - before.get((name, handed), 0) == embedded[other]


def test_a_killed_reader_is_left_out_until_it_serves_again(server: Server) -> None:
    log = server.process.log_text
    pid = int(READY.findall(log())[-1])
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    _, during = server.scrape()
    assert during[("groundwire_metrics_processes_scraped", frozenset())] == 1
    assert {dict(labels).get("server_process") for name, labels in during if name == HANDLED} == {
        "0"
    }
    deadline = time.monotonic() + 180
    while len(READY.findall(log())) < 2:
        assert time.monotonic() < deadline, log()
        time.sleep(0.2)
    _, again = server.scrape()
    assert again[("groundwire_metrics_processes_scraped", frozenset())] == 2
    assert ("groundwire_ready", frozenset({("server_process", "1")})) in again
    # refused until the primary reaps it, then restarting: one warning either way
    assert log().count("metrics: reader process 1 left out of the scrape: ") == 1
    assert "metrics: reader process 1 answers scrapes again" in log()


def test_only_the_configured_endpoint_listens_beyond_loopback(server: Server) -> None:
    endpoints = re.findall(r"metrics on http://([\d.]+):(\d+)/metrics", server.process.log_text())
    primary = [host for host, port in endpoints if int(port) == server.metrics_port]
    readers = {host for host, port in endpoints if int(port) != server.metrics_port}
    assert primary == ["0.0.0.0"], endpoints
    assert readers == {"127.0.0.1"}, endpoints
