"""OTLP export end to end: `groundwire serve` as its own process exports spans over OTLP/gRPC to a
real OTLP receiver (the collector's TraceService from opentelemetry-proto) hosted by the test.
The received bytes parse as ExportTraceServiceRequest, the server's spans continue the trace
the client sent, and the server's JSON log lines carry the same trace id."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2

from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.serve_subprocess import ServeSubprocess
from tests.telemetry_support import ClientTrace

RETRIEVE = "groundwire.v1.RetrievalService/Retrieve"


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    """Keeps every export request it is sent, parsed from the wire by grpc."""

    def __init__(self) -> None:
        self.requests: list[trace_service_pb2.ExportTraceServiceRequest] = []
        self.raw_sizes: list[int] = []
        self._lock = threading.Lock()

    def Export(  # noqa: N802 - the generated servicer's method name
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        with self._lock:
            self.requests.append(request)
            self.raw_sizes.append(request.ByteSize())
        return trace_service_pb2.ExportTraceServiceResponse()

    def spans(self) -> list[tuple[dict[str, str], trace_pb2.Span]]:
        """Every received span with its resource's string attributes."""
        with self._lock:
            return [
                ({a.key: a.value.string_value for a in rs_.resource.attributes}, span)
                for request in self.requests
                for rs_ in request.resource_spans
                for scope in rs_.scope_spans
                for span in scope.spans
            ]


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, int]]:
    servicer = Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, port
    server.stop(grace=None)


@pytest.mark.slow
def test_spans_reach_an_otlp_receiver_and_continue_the_client_trace(
    tmp_path: Path, receiver: tuple[Receiver, int]
) -> None:
    collector, port = receiver
    env = {
        "GROUNDWIRE_TRACING__EXPORTER": "otlp_grpc",
        "GROUNDWIRE_TRACING__ENDPOINT": f"http://127.0.0.1:{port}",
        "GROUNDWIRE_TRACING__SERVICE_NAME": "groundwire-test",
        "GROUNDWIRE_LOGGING__FORMAT": "json",
        "GROUNDWIRE_STORAGE__SEED_DEMO_CORPUS": "true",
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # the batch processor's export interval, ms
    }
    server = ServeSubprocess.start(tmp_path / "data", tmp_path / "serve.log", env=env)
    client = ClientTrace.new()
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = rs_grpc.RetrievalServiceStub(channel)
            reply = stub.Retrieve(
                rs.RetrieveRequest(query="what is a list comprehension", top_k=2),
                metadata=client.metadata("req-otlp-1"),
                timeout=60,
            )
            assert len(reply.hits) == 2
            with pytest.raises(grpc.RpcError):
                stub.Retrieve(
                    rs.RetrieveRequest(query="anything", collection="nowhere"),
                    metadata=client.metadata("req-otlp-2"),
                    timeout=30,
                )
        trace_id = client.trace_id.to_bytes(16, "big")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ours = [(r, s) for r, s in collector.spans() if s.trace_id == trace_id]
            if sum(s.name == RETRIEVE for _, s in ours) == 2:
                break
            time.sleep(0.1)
    finally:
        assert server.stop() == 0  # graceful shutdown flushes what is left

    assert collector.requests and all(size > 0 for size in collector.raw_sizes)
    ours = [(r, s) for r, s in collector.spans() if s.trace_id == trace_id]
    rpcs = [s for _, s in ours if s.name == RETRIEVE]
    assert len(rpcs) == 2
    for resource, _ in ours:
        assert resource["service.name"] == "groundwire-test"
    for rpc in rpcs:
        assert rpc.kind == trace_pb2.Span.SPAN_KIND_SERVER
        assert rpc.parent_span_id == client.span_id.to_bytes(8, "big")
    codes = sorted(
        a.value.int_value for rpc in rpcs for a in rpc.attributes if a.key == "rpc.grpc.status_code"
    )
    assert codes == [0, grpc.StatusCode.NOT_FOUND.value[0]]
    ok = next(r for r in rpcs if r.status.code != trace_pb2.Status.STATUS_CODE_ERROR)
    (retrieve,) = [s for _, s in ours if s.name == "retrieve" and s.parent_span_id == ok.span_id]
    stages = {s.name for _, s in ours if s.parent_span_id == retrieve.span_id}
    assert {"retrieve.embed", "retrieve.dense", "retrieve.lexical", "retrieve.context"} <= stages

    # JSON logs: every line is an object; the request's INFO record has its request and trace id
    lines = [line for line in server.log_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    assert any("groundwire listening on" in r["message"] for r in records)
    (failed,) = [r for r in records if r["request_id"] == "req-otlp-2"]
    assert failed["trace_id"] == f"{client.trace_id:032x}" and failed["level"] == "INFO"
