"""Traces through a real server: a server span per RPC continuing the client's W3C context, a
span per pipeline stage under it, and no query or document text in any attribute or INFO log."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import grpc
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.request_context import RequestIdFilter
from server.telemetry.json_log_format import JsonFormatter
from tests.conftest import make_settings
from tests.server_harness import ServerThread
from tests.telemetry_support import ClientTrace, children, memory_tracing, named, one, spans_of

RETRIEVE = "groundwire.v1.RetrievalService/Retrieve"
ANSWER = "groundwire.v1.RetrievalService/Answer"
UPSERT = "groundwire.v1.IndexService/UpsertDocuments"
RETRIEVE_STAGES = [
    "retrieve.preprocess",
    "retrieve.embed",
    "retrieve.dense",
    "retrieve.sections",
    "retrieve.lexical",
    "retrieve.filter",
    "retrieve.fuse",
    "retrieve.memory",
    "retrieve.rerank",
    "retrieve.expand",
    "retrieve.context",
]
SECRET_QUERY = "How do quokka-marmalade-7731 spells rotate?"
SECRET_TEXT = "The xylophone-sentinel-5519 rotates every spell at midnight."


@pytest.fixture(scope="module")
def spans() -> Iterator[InMemorySpanExporter]:
    with memory_tracing() as exporter:
        yield exporter


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    running = ServerThread(make_settings(tmp_path_factory.mktemp("gw-spans"))).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def channel(server: ServerThread) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.target) as chan:
        yield chan


def _parent_id(span: ReadableSpan) -> int:
    assert span.parent is not None
    return span.parent.span_id


def _span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def test_retrieve_continues_the_client_trace_with_a_span_per_stage(
    spans: InMemorySpanExporter, channel: grpc.Channel
) -> None:
    client = ClientTrace.new()
    stub = rs_grpc.RetrievalServiceStub(channel)
    request = rs.RetrieveRequest(query="how are strings stored in python", top_k=3)
    response = stub.Retrieve(request, metadata=client.metadata("req-retrieve-1"), timeout=60)
    found = spans_of(spans, client.trace_id, lambda s: bool(named(s, RETRIEVE)))

    rpc = one(found, RETRIEVE)
    assert rpc.kind is SpanKind.SERVER
    assert _parent_id(rpc) == client.span_id  # the client's span is the server span's parent
    assert dict(rpc.attributes or {}) == {
        "rpc.system": "grpc",
        "rpc.service": "groundwire.v1.RetrievalService",
        "rpc.method": "Retrieve",
        "groundwire.request_id": "req-retrieve-1",
        "rpc.grpc.status_code": 0,
    }
    (retrieve,) = children(found, rpc)
    assert retrieve.name == "retrieve"
    attributes = dict(retrieve.attributes or {})
    assert attributes["groundwire.tenant"] == "default"
    assert attributes["groundwire.collection"] == "default"
    assert attributes["groundwire.retrieval.mode"] == "hybrid"
    assert attributes["groundwire.retrieval.top_k"] == 3
    assert attributes["groundwire.retrieval.hits"] == len(response.hits) == 3
    assert attributes["groundwire.cache_hit"] is False

    stages = children(found, retrieve)
    assert sorted(s.name for s in stages) == sorted(RETRIEVE_STAGES)
    # the same mechanism timed the response's stages
    assert sorted(f"retrieve.{t.stage}" for t in response.timings) == sorted(RETRIEVE_STAGES)
    for stage in stages:
        assert retrieve.start_time <= stage.start_time <= stage.end_time <= retrieve.end_time  # type: ignore[operator]
    embed = dict(one(stages, "retrieve.embed").attributes or {})
    assert embed["groundwire.embed.batch_size"] >= 1  # type: ignore[operator]
    assert embed["groundwire.embed.queue_wait_ms"] >= 0  # type: ignore[operator]
    assert embed["groundwire.device"] == "cpu"
    dense = dict(one(stages, "retrieve.dense").attributes or {})
    assert dense["groundwire.dense.engine"] and dense["groundwire.device"] == "cpu"


def test_a_cached_retrieve_has_no_stage_spans(
    spans: InMemorySpanExporter, channel: grpc.Channel
) -> None:
    stub = rs_grpc.RetrievalServiceStub(channel)
    request = rs.RetrieveRequest(query="what is a lambda", top_k=2)
    stub.Retrieve(request, timeout=60)
    client = ClientTrace.new()
    stub.Retrieve(request, metadata=client.metadata(), timeout=60)
    found = spans_of(spans, client.trace_id, lambda s: bool(named(s, RETRIEVE)))
    (retrieve,) = children(found, one(found, RETRIEVE))
    assert dict(retrieve.attributes or {})["groundwire.cache_hit"] is True
    assert children(found, retrieve) == []


def test_a_failed_rpc_records_its_status_code(
    spans: InMemorySpanExporter, channel: grpc.Channel
) -> None:
    client = ClientTrace.new()
    stub = rs_grpc.RetrievalServiceStub(channel)
    with pytest.raises(grpc.RpcError) as caught:
        stub.Retrieve(
            rs.RetrieveRequest(query="anything", collection="nowhere"),
            metadata=client.metadata(),
            timeout=30,
        )
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND
    rpc = one(spans_of(spans, client.trace_id, lambda s: bool(named(s, RETRIEVE))), RETRIEVE)
    assert dict(rpc.attributes or {})["rpc.grpc.status_code"] == grpc.StatusCode.NOT_FOUND.value[0]
    assert rpc.status.status_code is StatusCode.ERROR
    assert rpc.status.description == "NOT_FOUND"


def test_answer_has_retrieval_prompt_generation_and_citation_spans(
    spans: InMemorySpanExporter, channel: grpc.Channel
) -> None:
    client = ClientTrace.new()
    stub = rs_grpc.RetrievalServiceStub(channel)
    request = rs.AnswerRequest(
        retrieve=rs.RetrieveRequest(query="why are tuples immutable", top_k=3)
    )
    events = list(stub.Answer(request, metadata=client.metadata(), timeout=120))
    summary = events[-1].summary
    found = spans_of(spans, client.trace_id, lambda s: bool(named(s, ANSWER)))

    rpc = one(found, ANSWER)
    assert dict(rpc.attributes or {})["rpc.grpc.status_code"] == 0
    top = children(found, rpc)
    assert [s.name for s in top] == [
        "retrieve",
        "answer.prompt",
        "answer.generate",
        "answer.citation_check",
    ]
    retrieve, prompt, generate, check = top
    assert sorted(s.name for s in children(found, retrieve)) == sorted(RETRIEVE_STAGES)
    assert dict(prompt.attributes or {})["groundwire.answer.template"] == events[0].started.template
    generation = dict(generate.attributes or {})
    assert generation["groundwire.generator"] == "extractive"
    assert generation["gen_ai.request.model"] == summary.model
    assert generation["gen_ai.usage.input_tokens"] == summary.usage.prompt_tokens
    assert generation["gen_ai.usage.output_tokens"] == summary.usage.completion_tokens > 0
    first_token = next(t.millis for t in summary.timings if t.stage == "first_token")
    assert generation["groundwire.generate.time_to_first_token_ms"] == pytest.approx(first_token)
    assert generation["groundwire.generate.finish_reason"] == "stop"
    assert dict(check.attributes or {})["groundwire.answer.citations"] == len(summary.citations)


def test_upsert_has_an_index_span_with_a_span_per_indexing_stage(
    spans: InMemorySpanExporter, channel: grpc.Channel
) -> None:
    index = ix_grpc.IndexServiceStub(channel)
    index.CreateCollection(ix.CreateCollectionRequest(name="traced"), timeout=30)
    docs = [
        common.Document(document_id="a.md", text="# Alpha\n\nFirst document about ferries."),
        common.Document(document_id="b.md", text="# Beta\n\nSecond document about bridges."),
    ]
    client = ClientTrace.new()
    reply = index.UpsertDocuments(
        iter([ix.UpsertDocumentsRequest(collection="traced", documents=docs)]),
        metadata=client.metadata(),
        timeout=60,
    )
    assert reply.upserted == 2
    found = spans_of(spans, client.trace_id, lambda s: bool(named(s, UPSERT)))
    rpc = one(found, UPSERT)
    assert dict(rpc.attributes or {})["rpc.method"] == "UpsertDocuments"
    (batch,) = children(found, rpc)
    assert batch.name == "index"
    attributes = dict(batch.attributes or {})
    assert attributes["groundwire.collection"] == "traced"
    assert attributes["groundwire.index.documents"] == 2
    chunks = attributes["groundwire.index.chunks"]
    assert isinstance(chunks, int) and chunks >= 2
    names = [s.name for s in children(found, batch)]
    assert names.count("index.chunk") == 2
    assert names.count("index.embed") == 1
    assert names.count("index.commit") == 1  # the collection commits the prepared batch at once
    embed = one(children(found, batch), "index.embed")
    assert dict(embed.attributes or {})["groundwire.embed.texts"] == chunks


def test_no_query_or_document_text_in_spans_or_info_logs(
    spans: InMemorySpanExporter, channel: grpc.Channel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.handler.addFilter(RequestIdFilter())
    index = ix_grpc.IndexServiceStub(channel)
    stub = rs_grpc.RetrievalServiceStub(channel)
    client = ClientTrace.new()
    with caplog.at_level(logging.INFO):
        index.CreateCollection(ix.CreateCollectionRequest(name="secrets"), timeout=30)
        document = common.Document(document_id="s.md", text=f"# Spells\n\n{SECRET_TEXT}")
        index.UpsertDocuments(
            iter([ix.UpsertDocumentsRequest(collection="secrets", documents=[document])]),
            metadata=client.metadata(),
            timeout=60,
        )
        retrieve = rs.RetrieveRequest(query=SECRET_QUERY, collection="secrets", top_k=1)
        hit = stub.Retrieve(retrieve, metadata=client.metadata(), timeout=60)
        assert SECRET_TEXT in hit.hits[0].chunk.text  # the text really flowed through
        list(
            stub.Answer(
                rs.AnswerRequest(retrieve=retrieve), metadata=client.metadata(), timeout=120
            )
        )
        with pytest.raises(grpc.RpcError):
            stub.Retrieve(
                rs.RetrieveRequest(query=SECRET_QUERY, collection="missing"),
                metadata=client.metadata("req-secret-miss"),
                timeout=30,
            )
    found = spans_of(spans, client.trace_id, lambda s: len(named(s, RETRIEVE)) == 2)
    assert len(found) > 20
    words = ("quokka-marmalade-7731", "xylophone-sentinel-5519", "Spells")
    for span in found:
        values = [span.name, *map(str, (span.attributes or {}).values())]
        values += [str(v) for event in span.events for v in (event.attributes or {}).values()]
        for value in values:
            assert not any(word in value for word in words), (span.name, value)
    records = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert records
    for record in records:
        text = JsonFormatter().format(record)
        assert not any(word in text for word in words), text
    # the failed Retrieve logged its status at INFO, stamped with the request and trace ids
    (miss,) = [r for r in records if getattr(r, "request_id", "") == "req-secret-miss"]
    logged = json.loads(JsonFormatter().format(miss))
    assert logged["trace_id"] == f"{client.trace_id:032x}"
    assert logged["level"] == "INFO" and logged["message"].startswith("NOT_FOUND")
