"""The synchronous Python client against real `groundwire serve` subprocesses."""

from __future__ import annotations

import threading
import time

import grpc
import pytest

from groundwire import (
    NO_RETRIES,
    AnswerFinished,
    AnswerStarted,
    Client,
    Document,
    FieldViolation,
    Filters,
    GroundwireError,
    TokenDelta,
)
from groundwire.v1 import index_service_pb2 as ix
from tests.clients.conftest import SLOW_COLLECTION, KeyedServer, TlsServer
from tests.fake_upstream import TcpProxy

DOCUMENTS = [
    Document(
        document_id="otters.md",
        text="# Otters\n\nSea otters hold hands while they sleep so that they do not drift apart.\n",
        metadata={"animal": "otter"},
    ),
    Document(
        document_id="bees.md",
        text="# Bees\n\nHoney bees dance a waggle dance to tell the hive where flowers are.\n",
        metadata={"animal": "bee"},
    ),
    {
        "document_id": "owls.md",
        "text": "# Owls\n\nOwls turn their heads up to 270 degrees because their eyes cannot move.\n",
        "metadata": {"animal": "owl"},
    },
]


def test_index_retrieve_and_stream_an_answer(keyed_server: KeyedServer) -> None:
    with Client(keyed_server.target, api_key=keyed_server.api_key) as client:
        assert client.health() == "SERVING"
        created = client.create_collection("animals", description="three animals")
        assert (created.name, created.description) == ("animals", "three animals")
        upserted = client.upsert_documents(DOCUMENTS, collection="animals")
        assert [(r.document_id, r.outcome) for r in upserted.results] == [
            ("otters.md", ix.DOCUMENT_OUTCOME_UPSERTED),
            ("bees.md", ix.DOCUMENT_OUTCOME_UPSERTED),
            ("owls.md", ix.DOCUMENT_OUTCOME_UPSERTED),
        ]
        assert (upserted.upserted, upserted.chunks_written) == (3, 3)

        found = client.retrieve(
            "why do otters hold hands?", collection="animals", top_k=2, mode="hybrid"
        )
        assert [h.chunk.document_id for h in found.hits][0] == "otters.md"
        assert len(found.hits) == 2
        only_bees = client.retrieve(
            "why do otters hold hands?",
            collection="animals",
            mode="dense",
            filters=Filters(metadata_equals={"animal": "bee"}),
            budget_chars=60,
        )
        assert [h.chunk.document_id for h in only_bees.hits] == ["bees.md"]
        assert only_bees.context.budget_chars == 60

        stream = client.answer("How do otters sleep?", collection="animals", top_k=1)
        events = list(stream)
        assert isinstance(events[0], AnswerStarted)
        assert events[0].retrieval.hits[0].chunk.document_id == "otters.md"
        assert isinstance(events[-1], AnswerFinished)
        deltas = [e.text for e in events[1:-1] if isinstance(e, TokenDelta)]
        assert deltas and len(deltas) == len(events) - 2
        assert stream.text == "".join(deltas) == stream.summary.text  # type: ignore[union-attr]
        assert [c.document_id for c in stream.citations] == ["otters.md"]
        assert stream.citations == events[-1].citations

        stored = client.get_document("owls.md", collection="animals")
        assert stored.document.metadata["animal"] == "owl" and len(stored.chunks) == 1
        assert client.stats("animals").collection.document_count == 3
        deleted = client.delete_documents(["bees.md", "wasps.md"], collection="animals")
        assert (deleted.deleted, list(deleted.not_found)) == (1, ["wasps.md"])
        assert "animals" in [c.name for c in client.list_collections()]
        assert client.drop_collection("animals") == 2
        assert "animals" not in [c.name for c in client.list_collections()]


def test_upsert_reports_each_document_across_calls(keyed_server: KeyedServer) -> None:
    documents = [
        Document(document_id="a.md", text="# A\n\nAlpha text about anchors.\n"),
        Document(document_id="broken.pdf", content=b"%PDF-1.4 truncated", source_path="x.pdf"),
        Document(document_id="c.md", text="# C\n\nGamma text about cranes.\n"),
    ]
    with Client(keyed_server.target, api_key=keyed_server.api_key) as client:
        client.create_collection("mixed")
        first = client.upsert_documents(iter(documents), collection="mixed", batch_size=2)
        assert [(r.document_id, r.outcome) for r in first.results] == [
            ("a.md", ix.DOCUMENT_OUTCOME_UPSERTED),
            ("broken.pdf", ix.DOCUMENT_OUTCOME_FAILED),
            ("c.md", ix.DOCUMENT_OUTCOME_UPSERTED),
        ]
        assert "not a readable PDF" in first.results[1].error
        assert (first.upserted, first.failed) == (2, 1)
        again = client.upsert_documents(documents[::2], collection="mixed")
        assert again.unchanged == 2 and again.sequence == first.sequence


def test_an_api_key_is_required_and_sent(keyed_server: KeyedServer) -> None:
    with Client(keyed_server.target, retry=NO_RETRIES) as anonymous:
        with pytest.raises(GroundwireError) as missing:
            anonymous.list_collections()
    assert missing.value.code is grpc.StatusCode.UNAUTHENTICATED
    assert missing.value.message == (
        "missing credentials: send the metadata 'authorization: Bearer <api key>'"
    )
    with Client(keyed_server.target, api_key="gw_not-a-key") as wrong:
        with pytest.raises(GroundwireError) as unknown:
            wrong.list_collections()
    assert unknown.value.code is grpc.StatusCode.UNAUTHENTICATED
    assert unknown.value.message == "unknown API key; check the key or ask an admin for a new one"
    with Client(keyed_server.target, api_key=keyed_server.api_key) as client:
        assert isinstance(client.list_collections(), list)


def test_a_bad_request_surfaces_its_field_violations(keyed_server: KeyedServer) -> None:
    with Client(keyed_server.target, api_key=keyed_server.api_key) as client:
        with pytest.raises(GroundwireError) as bad:
            client.retrieve("otters", top_k=1000)
    assert bad.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert bad.value.field_violations == (
        FieldViolation("top_k", "must be between 1 and 100; got 1000"),
    )
    assert str(bad.value) == f"INVALID_ARGUMENT: {bad.value.message}"


def test_a_deadline_that_expires(tls_server: TlsServer) -> None:
    with tls_server.client() as client:
        stream = client.answer("What do tides follow?", collection=SLOW_COLLECTION, timeout=2)
        with pytest.raises(GroundwireError) as late:
            for _ in stream:
                pass
    assert late.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
    assert stream.started is not None and stream.summary is None  # the generator never answered


def test_cancelling_an_answer_stream_stops_the_generation(tls_server: TlsServer) -> None:
    proxy = tls_server.generator_proxy
    with tls_server.client() as client:
        connections_before = proxy.connections
        stream = client.answer("What do tides follow?", collection=SLOW_COLLECTION)
        assert isinstance(next(stream), AnswerStarted)  # the generator now waits forever
        canceller = threading.Timer(0.2, stream.cancel)
        canceller.start()
        assert list(stream) == []  # blocks until the cancel, then ends quietly
        canceller.join()
        assert stream.cancelled and stream.summary is None and stream.citations == []
    assert_generation_stopped(proxy, connections_before)


def assert_generation_stopped(proxy: TcpProxy, connections_before: int) -> None:
    """The server opened a generator request for the answer and has closed every one."""
    waited_until = time.monotonic() + 30
    while len(proxy.upstream_closed_at) < proxy.connections and time.monotonic() < waited_until:
        time.sleep(0.05)
    assert proxy.connections > connections_before
    assert len(proxy.upstream_closed_at) == proxy.connections


def test_mutual_tls_needs_the_ca_and_a_client_certificate(tls_server: TlsServer) -> None:
    pki = tls_server.pki
    with tls_server.client() as client:
        assert client.health() == "SERVING"
        assert client.connection.uses_tls
    with Client(tls_server.target, ca_file=pki / "ca.crt", retry=NO_RETRIES) as no_cert:
        with pytest.raises(GroundwireError) as refused:
            no_cert.list_collections(timeout=10)
    assert refused.value.code is grpc.StatusCode.UNAVAILABLE
    with Client(tls_server.target, retry=NO_RETRIES) as plaintext:
        with pytest.raises(GroundwireError) as plain:
            plaintext.list_collections(timeout=10)
    assert plain.value.code is grpc.StatusCode.UNAVAILABLE
