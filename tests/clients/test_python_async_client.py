"""The asyncio Python client (grpc.aio) against real `groundwire serve` subprocesses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from groundwire import (
    NO_RETRIES,
    AnswerEvent,
    AnswerFinished,
    AnswerStarted,
    AsyncClient,
    Document,
    FieldViolation,
    GroundwireError,
    TokenDelta,
)
from groundwire.v1 import index_service_pb2 as ix
from tests.clients.conftest import SLOW_COLLECTION, KeyedServer, TlsServer
from tests.clients.test_python_client import assert_generation_stopped


async def _documents() -> AsyncIterator[Document]:
    for name, text in [
        (
            "lighthouse.md",
            "# Lighthouses\n\nA lighthouse lens is a Fresnel lens of stepped rings.\n",
        ),
        ("tides.md", "# Tides\n\nSpring tides happen at new and full moon, twice a month.\n"),
        ("knots.md", "# Knots\n\nA bowline makes a fixed loop that will not slip or jam.\n"),
    ]:
        yield Document(document_id=name, text=text)


def test_async_index_retrieve_and_stream_an_answer(keyed_server: KeyedServer) -> None:
    async def scenario() -> tuple[list[AnswerEvent], str, list[str]]:
        async with AsyncClient(keyed_server.target, api_key=keyed_server.api_key) as client:
            assert await client.health() == "SERVING"
            await client.create_collection("harbour")
            upserted = await client.upsert_documents(_documents(), collection="harbour")
            assert [r.outcome for r in upserted.results] == [ix.DOCUMENT_OUTCOME_UPSERTED] * 3
            found = await client.retrieve("which knot makes a loop?", collection="harbour")
            assert found.hits[0].chunk.document_id == "knots.md"
            stream = client.answer("Which knot makes a fixed loop?", collection="harbour", top_k=1)
            events = [event async for event in stream]
            stats = await client.stats("harbour")
            assert stats.collection.document_count == 3
            assert await client.drop_collection("harbour") == 3
            return events, stream.text, [c.document_id for c in stream.citations]

    events, text, cited = asyncio.run(scenario())
    assert isinstance(events[0], AnswerStarted) and isinstance(events[-1], AnswerFinished)
    assert all(isinstance(e, TokenDelta) for e in events[1:-1]) and len(events) > 2
    assert text == events[-1].summary.text and cited == ["knots.md"]


def test_async_key_required_and_field_violations(keyed_server: KeyedServer) -> None:
    async def scenario() -> tuple[GroundwireError, GroundwireError]:
        async with AsyncClient(keyed_server.target, retry=NO_RETRIES) as anonymous:
            with pytest.raises(GroundwireError) as missing:
                await anonymous.stats()
        async with AsyncClient(keyed_server.target, api_key=keyed_server.api_key) as client:
            with pytest.raises(GroundwireError) as bad:
                await client.retrieve("tides", top_k=0)
        return missing.value, bad.value

    missing, bad = asyncio.run(scenario())
    assert missing.code is grpc.StatusCode.UNAUTHENTICATED
    assert bad.code is grpc.StatusCode.INVALID_ARGUMENT
    assert bad.field_violations == (FieldViolation("top_k", "must be between 1 and 100; got 0"),)


def test_async_deadline_that_expires(tls_server: TlsServer) -> None:
    async def scenario() -> tuple[grpc.StatusCode, bool]:
        async with tls_server.async_client() as client:
            stream = client.answer("What do tides follow?", collection=SLOW_COLLECTION, timeout=2)
            with pytest.raises(GroundwireError) as late:
                async for _ in stream:
                    pass
            return late.value.code, stream.started is not None

    assert asyncio.run(scenario()) == (grpc.StatusCode.DEADLINE_EXCEEDED, True)


def test_async_cancel_of_an_answer_stream_over_mutual_tls(tls_server: TlsServer) -> None:
    proxy = tls_server.generator_proxy

    async def scenario() -> tuple[bool, list[AnswerEvent]]:
        async with tls_server.async_client() as client:
            stream = client.answer("What do tides follow?", collection=SLOW_COLLECTION)
            first = await stream.__anext__()
            assert isinstance(first, AnswerStarted)
            asyncio.get_running_loop().call_later(0.2, stream.cancel)
            rest = [event async for event in stream]
            return stream.cancelled, rest

    connections_before = proxy.connections
    cancelled, rest = asyncio.run(scenario())
    assert cancelled and rest == []
    assert_generation_stopped(proxy, connections_before)
