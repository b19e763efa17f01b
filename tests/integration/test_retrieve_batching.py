"""Retrieve through a real server on both query-embedding paths (`server.await_query_embeddings`):
concurrent calls answer exactly what the same calls answer one at a time, and a call cancelled
while its query waits for the model leaves the others' answers intact."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.conftest import make_settings
from tests.server_harness import ServerThread

DOCUMENTS = {
    "ports": "# Ports\n\nThe server listens on port 50051 unless server.port says otherwise.",
    "tuning": "# Tuning\n\nefSearch trades recall for latency in an HNSW index.",
    "backups": "# Backups\n\nSnapshots copy the SQLite store with the online backup API.",
    "auth": "# Keys\n\nAPI keys are hashed with scrypt; the keys file reloads on SIGHUP.",
    "tls": "# TLS\n\nSet tls_cert_file and tls_key_file to serve TLS; a client CA requires mTLS.",
}
QUERIES = [
    "which port does it listen on",
    "recall versus latency",
    "how are snapshots taken",
    "how are api keys stored",
    "mutual tls",
    "reload the keys file",
]


@pytest.fixture(scope="module", params=[True, False], ids=["awaited", "worker-thread"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerThread]:
    settings = make_settings(tmp_path_factory.mktemp("gw-batching"), seed_demo=False)
    settings = dataclasses.replace(
        settings,
        server=dataclasses.replace(settings.server, await_query_embeddings=request.param),
        cache=dataclasses.replace(settings.cache, enabled=False),  # every call embeds
    )
    running = ServerThread(settings).start()
    with grpc.insecure_channel(running.target) as channel:
        index = ix_grpc.IndexServiceStub(channel)
        index.CreateCollection(ix.CreateCollectionRequest(name="docs"), timeout=60)
        documents = [common.Document(document_id=k, text=v) for k, v in DOCUMENTS.items()]
        upsert = ix.UpsertDocumentsRequest(collection="docs", documents=documents)
        index.UpsertDocuments(iter([upsert]), timeout=300)
    yield running
    running.stop()


def retrieve_request(query: str) -> rs.RetrieveRequest:
    return rs.RetrieveRequest(query=query, collection="docs", top_k=3)


def answer_of(response: rs.RetrieveResponse) -> tuple[object, ...]:
    """What a caller gets, minus timings (scores rounded: batches may move the last bits)."""
    hits = tuple((h.chunk.document_id, h.rank, round(h.score, 4)) for h in response.hits)
    return hits, response.context.text


async def concurrently(target: str, cancel_one: bool) -> list[rs.RetrieveResponse | None]:
    """Every query in flight at once on one channel; with `cancel_one`, an extra call is
    cancelled right after it is sent (its query is then queued or inside the model)."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = rs_grpc.RetrievalServiceStub(channel)
        calls = [stub.Retrieve(retrieve_request(q), timeout=120) for q in QUERIES]
        if cancel_one:
            doomed = stub.Retrieve(retrieve_request("a query nobody waits for"), timeout=120)
            await asyncio.sleep(0.01)
            doomed.cancel()
        outcomes = await asyncio.gather(*calls)
        return list(outcomes)


@pytest.mark.parametrize("cancel_one", [False, True], ids=["all-wait", "one-cancelled"])
def test_concurrent_retrieves_equal_sequential_ones(server: ServerThread, cancel_one: bool) -> None:
    with grpc.insecure_channel(server.target) as channel:
        stub = rs_grpc.RetrievalServiceStub(channel)
        alone = [stub.Retrieve(retrieve_request(q), timeout=120) for q in QUERIES]
    together = asyncio.run(concurrently(server.target, cancel_one))
    assert [answer_of(r) for r in together if r is not None] == [answer_of(r) for r in alone]
    assert [r.hits[0].chunk.document_id for r in alone] == [
        "ports",
        "tuning",
        "backups",
        "auth",
        "tls",
        "auth",
    ]
    for response in together:
        assert response is not None
        assert {"embed", "dense", "lexical"} <= {t.stage for t in response.timings}
