"""Random requests (malformed bytes, huge fields, arbitrary values) never yield INTERNAL or a crash."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundwire.v1 import retrieval_service_pb2 as rs

INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=32)


@st.composite
def retrieve_requests(draw: st.DrawFn) -> bytes:
    request = rs.RetrieveRequest(
        query=draw(st.one_of(st.text(max_size=300), st.text(min_size=1900, max_size=2100))),
        collection=draw(st.one_of(st.just(""), st.just("default"), st.text(max_size=70))),
        max_risk_level=draw(INT32),
    )
    if draw(st.booleans()):
        request.top_k = draw(INT32)
    request.hybrid.mode = draw(INT32)
    request.hybrid.fusion = draw(INT32)
    if draw(st.booleans()):
        request.hybrid.rrf_k = draw(st.integers(0, 2**32 - 1))
    if draw(st.booleans()):
        request.hybrid.dense_weight = draw(FLOATS)
    if draw(st.booleans()):
        request.hybrid.candidate_depth = draw(st.integers(0, 2**32 - 1))
    if draw(st.booleans()):
        request.budget.max_tokens = draw(INT32)
    if draw(st.booleans()):
        request.score_threshold = draw(FLOATS)
    request.filters.document_ids.extend(draw(st.lists(st.text(max_size=20), max_size=3)))
    request.filters.source_types.extend(draw(st.lists(INT32, max_size=3)))
    request.expansion.strategy = draw(INT32)
    return request.SerializeToString()


RAW_BYTES = st.one_of(
    st.binary(max_size=2048),
    st.binary(max_size=64).map(
        lambda b: b"\x0a" + bytes([len(b)]) + b
    ),  # query field with arbitrary bytes
)


def _call(channel: grpc.Channel, payload: bytes) -> None:
    raw = channel.unary_unary("/groundwire.v1.RetrievalService/Retrieve")
    try:
        raw(payload, timeout=60)
    except grpc.RpcError as error:
        assert error.code() is not grpc.StatusCode.INTERNAL, error.details()
        assert error.code() is not grpc.StatusCode.UNKNOWN, error.details()


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(payload=st.one_of(retrieve_requests(), RAW_BYTES))
def test_random_requests_never_produce_internal(channel: grpc.Channel, payload: bytes) -> None:
    _call(channel, payload)


def test_server_still_serving_after_fuzzing(channel: grpc.Channel) -> None:
    status = (
        health_pb2_grpc.HealthStub(channel)
        .Check(health_pb2.HealthCheckRequest(), timeout=10)
        .status
    )
    assert status == health_pb2.HealthCheckResponse.SERVING
