"""`groundwire serve --processes 2`: a primary that writes and a reader process on one port.

A real server binary on port 0 with API keys; many channels, each its own TCP connection, land
on both processes (SO_REUSEPORT; tests/serving_process.py tells which serves a channel). Writes
sent to either process are forwarded to the primary, and every process serves them as soon as
they are acknowledged, caches warm or not; deletes and drops are never served again; keys and
tenants hold in the reader; ClearCache empties and Stats counts every process's caches, through
either process, a reader that does not answer bounding neither; a reader killed with SIGKILL is
started again while the server keeps serving; SIGTERM stops every process.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.api_keys import hash_key, new_key
from tests.serve_subprocess import SERVER_ENV, ServeSubprocess
from tests.serving_process import serving_process

CHANNELS = 12
READY = re.compile(r"reader process 1 ready \(pid (\d+)\)")
COLLECTION = "notes"
MEMORY = common.SOURCE_TYPE_MEMORY


@dataclasses.dataclass
class Client:
    """One channel (its own connection) with stubs."""

    channel: grpc.Channel
    index: ix_grpc.IndexServiceStub
    retrieval: rs_grpc.RetrievalServiceStub


@dataclasses.dataclass
class Cluster:
    server: ServeSubprocess
    keys: dict[tuple[str, str], str]
    clients: list[Client]

    def auth(self, tenant: str = "acme", role: str = "admin") -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.keys[(tenant, role)]}"),)

    def reader_pid(self) -> int:
        found = READY.findall(self.server.log_text())
        return int(found[-1])


def _connect(target: str) -> Client:
    # a local subchannel pool: every channel opens its own TCP connection
    channel = grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
    grpc.channel_ready_future(channel).result(timeout=30)
    return Client(channel, ix_grpc.IndexServiceStub(channel), rs_grpc.RetrievalServiceStub(channel))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    directory = tmp_path_factory.mktemp("processes")
    keys = {(t, r): new_key() for t in ("acme", "globex") for r in ("reader", "writer", "admin")}
    (directory / "keys.toml").write_text(
        "\n".join(
            f'[[keys]]\nid = "{t}-{r}"\ntenant = "{t}"\nrole = "{r}"\nsha256 = "{hash_key(k)}"\n'
            for (t, r), k in keys.items()
        ),
        "utf-8",
    )
    server = ServeSubprocess.start(
        directory / "data",
        directory / "server.log",
        env={
            "GROUNDWIRE_SERVER__PROCESSES": "2",
            "GROUNDWIRE_AUTH__KEYS_FILE": str(directory / "keys.toml"),
        },
    )
    cluster = Cluster(server, keys, [])
    try:
        cluster.clients = [_connect(server.target) for _ in range(CHANNELS)]
        cluster.clients[0].index.CreateCollection(
            ix.CreateCollectionRequest(name=COLLECTION), metadata=cluster.auth()
        )
        _upsert(cluster, cluster.clients[0], "intro", "Groundwire serves retrieval over gRPC.")
        yield cluster
    finally:
        for client in cluster.clients:
            client.channel.close()
        if server.process.poll() is None:
            server.stop()


def _upsert(cluster: Cluster, client: Client, document_id: str, text: str) -> None:
    request = ix.UpsertDocumentsRequest(
        collection=COLLECTION,
        documents=[
            common.Document(document_id=document_id, text=text, source_path=f"{document_id}.md")
        ],
    )
    reply = client.index.UpsertDocuments(iter([request]), metadata=cluster.auth("acme", "writer"))
    assert reply.upserted == 1, reply


def _documents(cluster: Cluster, client: Client, query: str) -> list[str]:
    reply = client.retrieval.Retrieve(
        rs.RetrieveRequest(query=query, collection=COLLECTION, top_k=10),
        metadata=cluster.auth("acme", "reader"),
    )
    return [hit.chunk.document_id for hit in reply.hits]


def _status(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    try:
        call()
    except grpc.RpcError as error:
        return error.code(), error.details()
    return grpc.StatusCode.OK, ""


def _placement(cluster: Cluster) -> list[int]:
    """The process serving each channel (0: the primary, 1: the reader)."""
    return [
        serving_process(client.channel, COLLECTION, f"which process am I {n}", cluster.auth())
        for n, client in enumerate(cluster.clients)
    ]


def test_connections_reach_both_processes(cluster: Cluster) -> None:
    placement = _placement(cluster)
    assert set(placement) == {0, 1}, placement


def _clear_cache(cluster: Cluster, client: Client) -> rs.ClearCacheResponse:
    reply: rs.ClearCacheResponse = client.retrieval.ClearCache(
        rs.ClearCacheRequest(collection=COLLECTION),
        metadata=cluster.auth("acme", "writer"),
        timeout=60,  # a reader that cannot answer must not hold the call: it is bounded
    )
    return reply


def _stats(cluster: Cluster, client: Client) -> ix.StatsResponse:
    """Stats of the collection through `client`'s process, with a reader's key."""
    reply: ix.StatsResponse = client.index.Stats(
        ix.StatsRequest(collection=COLLECTION),
        metadata=cluster.auth("acme", "reader"),
        timeout=60,  # a reader that cannot answer must not hold the call: it is bounded
    )
    return reply


def _cached_entries(cluster: Cluster) -> list[int]:
    """The retrieval cache entries for the collection, summed over the processes, as Stats
    reports them through each channel."""
    return [_stats(cluster, client).retrieval_cache_entries for client in cluster.clients]


def test_clear_cache_through_any_process_empties_every_process(cluster: Cluster) -> None:
    reader = cluster.auth("acme", "reader")
    query = rs.RetrieveRequest(query="a question asked again and again", collection=COLLECTION)
    _clear_cache(cluster, cluster.clients[0])  # start from empty caches
    for caller in cluster.clients:  # channels land on both processes: so do the ClearCaches
        replies = [c.retrieval.Retrieve(query, metadata=reader) for c in cluster.clients]
        cold = [reply for reply in replies if not reply.cache_hit]
        # after a clear, the first ask in each of the two processes misses both caches
        assert len(cold) == 2 and not any(reply.embedding_cache_hit for reply in cold)
        assert _cached_entries(cluster) == [2] * CHANNELS  # one entry in each process
        cleared = _clear_cache(cluster, caller)
        assert cleared.complete, cleared
        assert [p.process for p in cleared.processes] == [0, 1]
        assert all(p.cleared and p.pid > 0 and not p.error for p in cleared.processes)
        assert [p.retrieval_entries for p in cleared.processes] == [1, 1]
        assert [p.embedding_entries for p in cleared.processes] == [1, 1]
        assert (cleared.retrieval_entries, cleared.embedding_entries) == (2, 2)
        assert _cached_entries(cluster) == [0] * CHANNELS  # every process's cache is empty


def test_clear_cache_is_bounded_when_a_reader_does_not_answer(cluster: Cluster) -> None:
    reader_pid = cluster.reader_pid()
    reader = cluster.auth("acme", "reader")
    _clear_cache(cluster, cluster.clients[0])
    # which channels reach the primary: a result cached through one channel is cleared there
    on_primary = []
    for number, client in enumerate(cluster.clients):
        client.retrieval.Retrieve(
            rs.RetrieveRequest(query=f"where am I {number}", collection=COLLECTION),
            metadata=reader,
        )
        cleared = _clear_cache(cluster, client)
        if cleared.processes[0].retrieval_entries == 1:
            on_primary.append(client)
    assert on_primary and len(on_primary) < len(cluster.clients)
    os.kill(reader_pid, signal.SIGSTOP)  # alive but deaf
    try:
        cleared = _clear_cache(cluster, on_primary[0])
    finally:
        os.kill(reader_pid, signal.SIGCONT)
    assert not cleared.complete
    primary, stopped = cleared.processes
    assert primary.cleared and not primary.error
    assert (stopped.process, stopped.pid, stopped.cleared) == (1, reader_pid, False)
    assert stopped.error == "did not answer within 5.0 s"
    # once it runs again, its late answer to the first request is read before the next is sent
    again = _clear_cache(cluster, on_primary[0])
    assert again.complete and all(p.cleared for p in again.processes), again


def _counters(stats: ix.StatsResponse) -> tuple[int, ...]:
    return (
        stats.embedding_cache_hits,
        stats.embedding_cache_misses,
        stats.retrieval_cache_hits,
        stats.retrieval_cache_misses,
        stats.retrieval_cache_entries,
        stats.cache_processes,
    )


def test_stats_sums_the_cache_counters_of_every_process(cluster: Cluster) -> None:
    placement = _placement(cluster)
    assert set(placement) == {0, 1}, placement
    _clear_cache(cluster, cluster.clients[0])
    reader = cluster.auth("acme", "reader")
    asked = len(cluster.clients)
    again = 4
    for number, client in enumerate(cluster.clients):  # each question in its channel's process
        request = rs.RetrieveRequest(query=f"distinct question {number}", collection=COLLECTION)
        assert not client.retrieval.Retrieve(request, metadata=reader).cache_hit
    for number, client in enumerate(cluster.clients[:again]):  # asked again: a retrieval hit
        request = rs.RetrieveRequest(query=f"distinct question {number}", collection=COLLECTION)
        assert client.retrieval.Retrieve(request, metadata=reader).cache_hit
    # each question missed both caches once, in the process serving its channel; the ones asked
    # again hit that process's retrieval cache (no embedding is looked up then); and Stats
    # through any process, a reader's key included, counts both processes
    expected = (0, asked, again, asked, asked, 2)
    assert [_counters(_stats(cluster, client)) for client in cluster.clients] == [
        expected
    ] * CHANNELS
    cleared = _clear_cache(cluster, cluster.clients[0])
    assert [p.retrieval_entries for p in cleared.processes] == [
        placement.count(0),
        placement.count(1),
    ]
    assert [_counters(_stats(cluster, client)) for client in cluster.clients] == [
        (0, 0, 0, 0, 0, 2)
    ] * CHANNELS


def test_stats_leaves_out_a_reader_that_does_not_answer(cluster: Cluster) -> None:
    reader_pid = cluster.reader_pid()
    placement = _placement(cluster)
    on_primary = cluster.clients[placement.index(0)]
    on_reader = cluster.clients[placement.index(1)]
    _clear_cache(cluster, on_primary)
    reader = cluster.auth("acme", "reader")
    for client in (on_primary, on_reader):
        client.retrieval.Retrieve(
            rs.RetrieveRequest(query="one question in each process", collection=COLLECTION),
            metadata=reader,
        )
    assert _counters(_stats(cluster, on_reader)) == (0, 2, 0, 2, 2, 2)
    os.kill(reader_pid, signal.SIGSTOP)  # alive but deaf
    try:
        started = time.monotonic()
        stats = _stats(cluster, on_primary)
        waited_s = time.monotonic() - started
    finally:
        os.kill(reader_pid, signal.SIGCONT)
    assert _counters(stats) == (0, 1, 0, 1, 1, 1)  # the primary's own: the call still answers
    assert waited_s >= 5.0  # it waited for the reader (bounded: the call's own 60 s timeout)
    assert (
        f"Stats: reader process 1 (pid {reader_pid}) left out of the cache counters: "
        "did not answer within 5.0 s"
    ) in cluster.server.log_text()
    # once it runs again, its late answer is read (and dropped) before the next request's
    assert _counters(_stats(cluster, on_primary)) == (0, 2, 0, 2, 2, 2)


def test_an_upsert_through_any_process_is_served_by_every_process_at_once(
    cluster: Cluster,
) -> None:
    for number, writer in enumerate(cluster.clients[:4]):
        word = f"zebrafish{number}"
        for client in cluster.clients:  # warm every cache with the result without it
            assert f"fish-{number}" not in _documents(cluster, client, word)
        _upsert(cluster, writer, f"fish-{number}", f"The {word} swims in the harbour.")
        for client in cluster.clients:
            assert _documents(cluster, client, word)[0] == f"fish-{number}"


def test_answers_stream_from_every_process(cluster: Cluster) -> None:
    request = rs.AnswerRequest(
        retrieve=rs.RetrieveRequest(query="What does zebrafish0 do?", collection=COLLECTION)
    )
    for client in cluster.clients:
        events = list(
            client.retrieval.Answer(request, metadata=cluster.auth("acme", "reader"), timeout=120)
        )
        kinds = [event.WhichOneof("event") for event in events]
        assert kinds[0] == "started" and kinds[-1] == "summary"
        hits = events[0].started.retrieval.hits
        assert hits[0].chunk.document_id == "fish-0"


def test_a_deleted_document_is_never_served_again(cluster: Cluster) -> None:
    _upsert(cluster, cluster.clients[1], "secret", "The marmalade recipe is classified.")
    for client in cluster.clients:  # warm every process's caches with it
        for _ in range(2):
            assert "secret" in _documents(cluster, client, "marmalade recipe")
    reply = cluster.clients[2].index.DeleteDocuments(
        ix.DeleteDocumentsRequest(collection=COLLECTION, document_ids=["secret"]),
        metadata=cluster.auth("acme", "writer"),
    )
    assert reply.deleted == 1
    reader = cluster.auth("acme", "reader")
    for client in cluster.clients:
        assert "secret" not in _documents(cluster, client, "marmalade recipe")
        code, _ = _status(
            lambda c=client: c.index.GetDocument(
                ix.GetDocumentRequest(collection=COLLECTION, document_id="secret"),
                metadata=reader,
            )
        )
        assert code is grpc.StatusCode.NOT_FOUND


def test_drop_and_recreate_are_seen_by_every_process(cluster: Cluster) -> None:
    admin = cluster.auth()
    for client in cluster.clients:
        assert "intro" in _documents(cluster, client, "retrieval over gRPC")
    cluster.clients[3].index.DropCollection(
        ix.DropCollectionRequest(name=COLLECTION), metadata=admin
    )
    for client in cluster.clients:
        code, message = _status(lambda c=client: _documents(cluster, c, "retrieval over gRPC"))
        assert code is grpc.StatusCode.NOT_FOUND, message
        listed = client.index.ListCollections(ix.ListCollectionsRequest(), metadata=admin)
        assert COLLECTION not in [c.name for c in listed.collections]
    cluster.clients[4].index.CreateCollection(
        ix.CreateCollectionRequest(name=COLLECTION), metadata=admin
    )
    _upsert(cluster, cluster.clients[5], "outro", "Retrieval over gRPC, second edition.")
    for client in cluster.clients:
        assert _documents(cluster, client, "retrieval over gRPC") == ["outro"]


def test_memories_added_through_any_process_are_fused_by_every_process(cluster: Cluster) -> None:
    reader = cluster.auth("acme", "reader")
    request = rs.RetrieveRequest(
        query="which port does the server use", collection=COLLECTION, use_memory=True
    )

    def memory_hits(client: Client) -> list[str]:
        reply = client.retrieval.Retrieve(request, metadata=reader)
        return [h.chunk.chunk_id for h in reply.hits if h.chunk.source_type == MEMORY]

    for client in cluster.clients:  # warm every cache without memories
        assert memory_hits(client) == []
    added = cluster.clients[6].index.AddMemories(
        ix.AddMemoriesRequest(
            collection=COLLECTION,
            memories=[ix.Memory(text="The user runs the server on port 7000.", importance=0.9)],
        ),
        metadata=cluster.auth("acme", "writer"),
    )
    assert list(added.memory_ids) == ["memory-1"]
    for client in cluster.clients:
        assert memory_hits(client) == ["memory-1"]
        stats = client.index.Stats(ix.StatsRequest(collection=COLLECTION), metadata=reader)
        assert stats.memories == 1


def test_a_restore_is_served_by_every_process(cluster: Cluster) -> None:
    admin = cluster.auth()
    taken = cluster.clients[7].index.SnapshotCollection(
        ix.SnapshotCollectionRequest(collection=COLLECTION), metadata=admin
    )
    _upsert(cluster, cluster.clients[8], "later", "The albatross arrived after the snapshot.")
    for client in cluster.clients:
        assert _documents(cluster, client, "albatross")[0] == "later"
    cluster.clients[9].index.RestoreCollection(
        ix.RestoreCollectionRequest(collection=COLLECTION, snapshot_id=taken.snapshot.snapshot_id),
        metadata=admin,
    )
    for client in cluster.clients:
        assert "later" not in _documents(cluster, client, "albatross")


def test_a_compaction_is_followed_by_every_process(cluster: Cluster) -> None:
    _upsert(cluster, cluster.clients[10], "draft", "The pelican draft is obsolete.")
    for client in cluster.clients:
        assert "draft" in _documents(cluster, client, "pelican draft")
    cluster.clients[11].index.DeleteDocuments(
        ix.DeleteDocumentsRequest(collection=COLLECTION, document_ids=["draft"]),
        metadata=cluster.auth("acme", "writer"),
    )
    cluster.clients[0].index.CompactCollection(
        ix.CompactCollectionRequest(collection=COLLECTION), metadata=cluster.auth()
    )
    _upsert(cluster, cluster.clients[1], "final", "The pelican final version ships.")
    for client in cluster.clients:
        found = _documents(cluster, client, "pelican draft final")
        assert found[0] == "final" and "draft" not in found


def test_keys_roles_and_tenants_hold_in_every_process(cluster: Cluster) -> None:
    reader = cluster.auth("acme", "reader")
    for client in cluster.clients:
        assert _status(
            lambda c=client: c.retrieval.Retrieve(
                rs.RetrieveRequest(query="x", collection=COLLECTION)
            )
        ) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "missing credentials: send the metadata 'authorization: Bearer <api key>'",
        )
        request = ix.UpsertDocumentsRequest(
            collection=COLLECTION, documents=[common.Document(document_id="x", text="x")]
        )
        code, message = _status(
            lambda c=client, r=request: c.index.UpsertDocuments(iter([r]), metadata=reader)
        )
        assert code is grpc.StatusCode.PERMISSION_DENIED, message
        assert message.startswith("UpsertDocuments requires the writer role")
        code, _ = _status(
            lambda c=client: c.retrieval.Retrieve(
                rs.RetrieveRequest(query="gRPC", collection=COLLECTION),
                metadata=cluster.auth("globex", "reader"),
            )
        )
        assert code is grpc.StatusCode.NOT_FOUND  # acme's collection does not exist for globex


def _burst(client: Client, calls: list[Callable[[], Any]]) -> list[tuple[grpc.StatusCode, str]]:
    """The statuses of `calls` made at once on `client`'s one connection."""
    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(_status, calls))


def test_calls_handed_to_the_other_process_keep_the_callers_key_and_tenant(
    cluster: Cluster,
) -> None:
    """Calls that arrive at once on one connection run in both processes (the busier one hands
    some over, server/read_balancing.py); the process that runs a handed-over call checks the
    caller's key, role and tenant as the one it arrived at does."""
    client = cluster.clients[0]
    retrieve = rs.RetrieveRequest(query="What swims in the harbour?", collection=COLLECTION)
    answer = rs.AnswerRequest(retrieve=retrieve)
    reader, globex = cluster.auth("acme", "reader"), cluster.auth("globex", "reader")

    def answered() -> None:
        events = list(client.retrieval.Answer(answer, metadata=reader, timeout=120))
        assert events[0].started.retrieval.hits
        assert events[-1].WhichOneof("event") == "summary"

    def found() -> None:
        reply = client.retrieval.Retrieve(retrieve, metadata=reader, timeout=120)
        assert reply.hits

    assert _burst(client, [found] * 12 + [answered] * 4) == [(grpc.StatusCode.OK, "")] * 16
    refused = _burst(client, [lambda: client.retrieval.Retrieve(retrieve, metadata=globex)] * 8)
    assert {code for code, _ in refused} == {grpc.StatusCode.NOT_FOUND}
    anonymous = _burst(client, [lambda: client.retrieval.Retrieve(retrieve)] * 8)
    assert {code for code, _ in anonymous} == {grpc.StatusCode.UNAUTHENTICATED}


def test_the_reader_never_loads_the_document_model_for_the_reads_above(cluster: Cluster) -> None:
    # it embeds queries by onnx-int8; the model check and token counts use the query session, so the
    # passage session (loaded lazily, core/embed/lazy_embedder.py) stays unloaded after Retrieve,
    # Answer, Stats and the model check of every collection served above
    log = cluster.server.log_text()
    assert re.search(r"queries by onnx-int8 \(\d+ thread\(s\)\), passages loaded on first use", log)
    assert "on its first use" not in log


def _watch_restart(cluster: Cluster, client: Client, pid: int) -> list[str]:
    """The errors ClearCache through `client` names for the reader, polled while the reader `pid`
    is the one last ready."""
    restarting = []
    deadline = time.monotonic() + 180
    while cluster.reader_pid() == pid:
        assert cluster.server.process.poll() is None, cluster.server.log_text()
        assert time.monotonic() < deadline, cluster.server.log_text()
        cleared = _clear_cache(cluster, client)  # answers at once, naming the missing reader
        assert cleared.processes[0].cleared
        if not cleared.processes[1].cleared:
            assert not cleared.complete
            restarting.append(cleared.processes[1].error)
        time.sleep(0.2)
    return restarting


def test_a_killed_reader_is_restarted_and_the_server_keeps_serving(cluster: Cluster) -> None:
    pid = cluster.reader_pid()
    os.kill(pid, signal.SIGKILL)
    primary = _connect(cluster.server.target)  # only the primary listens now

    def found() -> None:  # handed to the dead reader, it runs in the primary instead
        assert _documents(cluster, primary, "What does Groundwire serve?")

    # watched from the kill on, beside the burst: the restart may end before the burst does
    with ThreadPoolExecutor(1) as watcher:
        watching = watcher.submit(_watch_restart, cluster, primary, pid)
        assert _burst(primary, [found] * 16) == [(grpc.StatusCode.OK, "")] * 16
        restarting = watching.result()
    primary.channel.close()
    # the first call may reach the reader before its death is seen (the link then ends)
    assert "restarting: it starts with empty caches" in restarting
    assert set(restarting) <= {"restarting: it starts with empty caches", "exited while clearing"}
    assert f"reader process 1 (pid {pid}) exited with -9; starting it again" in (
        cluster.server.log_text()
    )
    fresh = [_connect(cluster.server.target) for _ in range(CHANNELS)]
    try:
        _upsert(cluster, fresh[0], "after", "The phoenix rises after the crash.")
        for client in fresh:
            assert _documents(cluster, client, "phoenix rises")[0] == "after"
    finally:
        for client in fresh:
            client.channel.close()


def test_sigterm_stops_every_process(cluster: Cluster) -> None:
    reader = cluster.reader_pid()
    assert cluster.server.stop() == 0
    with pytest.raises(ProcessLookupError):
        os.kill(reader, 0)  # reaped, not a zombie
    log = cluster.server.log_text()
    assert log.count("groundwire listening on") == 1


def test_bad_process_counts_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"server\.processes: must be 0-64"):
        ServeSubprocess.start(
            tmp_path / "data", tmp_path / "log", env={"GROUNDWIRE_SERVER__PROCESSES": "65"}
        )


def test_a_port_in_use_is_refused_naming_the_setting(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "server", "serve", "--port", str(port), "--processes", "2"]
            + ["--data-dir", str(tmp_path / "data")],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, **SERVER_ENV},
        )
    assert result.returncode == 1
    assert result.stderr.strip().endswith(
        f"error: could not bind 127.0.0.1:{port} (Address already in use); pick another server.port"
    )


def test_readers_exit_with_a_killed_primary(tmp_path: Path) -> None:
    server = ServeSubprocess.start(
        tmp_path / "data", tmp_path / "server.log", env={"GROUNDWIRE_SERVER__PROCESSES": "2"}
    )
    reader = int(READY.findall(server.log_text())[-1])
    server.kill_9()
    deadline = time.monotonic() + 60
    while True:
        try:
            os.kill(reader, 0)
        except ProcessLookupError:
            break  # gone: it saw its link to the primary close
        assert time.monotonic() < deadline, server.log_text()
        time.sleep(0.1)
