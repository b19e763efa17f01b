"""`WriteForwarder` passes calls of every kind through unchanged: a real forwarding server (all
RPCs forwarded) in front of the session's server. Responses, server streams, client streams,
status codes with their rich details and metadata arrive as if called directly, also the status
of a client stream the primary refuses while the caller still sends."""

from __future__ import annotations

import asyncio
import collections
import threading
from collections.abc import Iterator

import grpc
import pytest
from grpc_status import rpc_status

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.handlers import Context
from server.index_servicer import SERVICE as INDEX_SERVICE
from server.retrieval_servicer import SERVICE as RETRIEVAL_SERVICE
from server.write_forwarding import WriteForwarder, forwarded_metadata
from tests.server_harness import ServerThread

ADMITTED: list[tuple[tuple[str, str | bytes], ...]] = []


async def _admit(context: Context) -> None:
    ADMITTED.append(forwarded_metadata(context.invocation_metadata()))


@pytest.fixture(scope="module")
def forwarding_target(live_server: ServerThread) -> Iterator[str]:
    """A grpc.aio server forwarding every RPC to the session server."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    forwarder = WriteForwarder(live_server.target, frozenset(), 32 * 1024 * 1024)

    async def boot() -> tuple[grpc.aio.Server, int]:
        server = grpc.aio.server()
        for service in (RETRIEVAL_SERVICE, INDEX_SERVICE):
            handlers = {m.name: forwarder.handler_for(m, _admit) for m in service.methods}
            server.add_generic_rpc_handlers(
                (grpc.method_handlers_generic_handler(service.full_name, handlers),)  # type: ignore[arg-type]
            )
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        return server, port

    server, port = asyncio.run_coroutine_threadsafe(boot(), loop).result(30)
    yield f"127.0.0.1:{port}"
    asyncio.run_coroutine_threadsafe(server.stop(0), loop).result(30)
    asyncio.run_coroutine_threadsafe(forwarder.close(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(30)


@pytest.fixture(scope="module")
def forwarded(forwarding_target: str) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(forwarding_target) as channel:
        yield channel


def test_unary_calls_and_their_metadata_pass_through(
    forwarded: grpc.Channel, retrieval: rs_grpc.RetrievalServiceStub
) -> None:
    stub = rs_grpc.RetrievalServiceStub(forwarded)
    request = rs.RetrieveRequest(query="Why are Python strings immutable?", top_k=3)
    through = stub.Retrieve(request, metadata=(("x-request-id", "forwarded-1"),))
    direct = retrieval.Retrieve(request)
    assert [h.chunk.chunk_id for h in through.hits] == [h.chunk.chunk_id for h in direct.hits]
    assert ("x-request-id", "forwarded-1") in ADMITTED[-1]


def test_server_streams_pass_through(forwarded: grpc.Channel) -> None:
    stub = rs_grpc.RetrievalServiceStub(forwarded)
    request = rs.AnswerRequest(retrieve=rs.RetrieveRequest(query="What is a lambda?", top_k=3))
    kinds = [event.WhichOneof("event") for event in stub.Answer(request, timeout=120)]
    assert kinds[0] == "started" and kinds[-1] == "summary" and "delta" in kinds


def test_client_streams_pass_through(forwarded: grpc.Channel) -> None:
    stub = ix_grpc.IndexServiceStub(forwarded)
    stub.CreateCollection(ix.CreateCollectionRequest(name="forwarded"))
    messages = [
        ix.UpsertDocumentsRequest(
            collection="forwarded",
            documents=[common.Document(document_id=f"d{n}", text=f"Forwarded note number {n}.")],
        )
        for n in range(3)
    ]
    reply = stub.UpsertDocuments(iter(messages), timeout=120)
    assert reply.upserted == 3
    stub.DropCollection(ix.DropCollectionRequest(name="forwarded"))


def test_status_codes_and_rich_details_pass_through(forwarded: grpc.Channel) -> None:
    stub = ix_grpc.IndexServiceStub(forwarded)
    with pytest.raises(grpc.RpcError) as raised:
        stub.Stats(ix.StatsRequest(collection="no-such-collection"))
    error = raised.value
    assert error.code() is grpc.StatusCode.NOT_FOUND
    assert error.details() == (
        "collection 'no-such-collection' does not exist; create it with CreateCollection "
        "or list collections with ListCollections"
    )
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None and status.message == error.details()
    with pytest.raises(grpc.RpcError) as invalid:
        rs_grpc.RetrievalServiceStub(forwarded).Retrieve(rs.RetrieveRequest(query=""))
    assert invalid.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert rpc_status.from_call(invalid.value).details  # type: ignore[arg-type, union-attr]


def test_a_client_stream_refused_midway_ends_with_the_primarys_status(
    forwarded: grpc.Channel,
) -> None:
    # the primary refuses the first message while the caller still streams the rest: a send
    # racing with that refusal must not turn its status into INTERNAL
    stub = ix_grpc.IndexServiceStub(forwarded)
    text = "A note nobody reads, streamed after the refused message. " * 8

    def stream() -> Iterator[ix.UpsertDocumentsRequest]:
        yield ix.UpsertDocumentsRequest(collection="no-such-collection")
        for n in range(200):
            yield ix.UpsertDocumentsRequest(
                documents=[common.Document(document_id=f"d{n}", text=text)]
            )

    seen: collections.Counter[tuple[grpc.StatusCode, str]] = collections.Counter()
    for _ in range(200):
        with pytest.raises(grpc.RpcError) as raised:
            stub.UpsertDocuments(stream(), timeout=60)
        seen[(raised.value.code(), raised.value.details())] += 1
    assert seen == {
        (
            grpc.StatusCode.NOT_FOUND,
            "collection 'no-such-collection' does not exist; create it "
            "with CreateCollection or list collections with ListCollections",
        ): 200
    }
