"""Bad input gets a precise status whose message and BadRequest details name the field."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc


def _error(stub: rs_grpc.RetrievalServiceStub, request: rs.RetrieveRequest) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        stub.Retrieve(request, timeout=30)
    return info.value


def _violations(error: grpc.RpcError) -> list[tuple[str, str]]:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, "no google.rpc.Status details"
    found = []
    for detail in status.details:
        bad = error_details_pb2.BadRequest()
        if detail.Unpack(bad):
            found.extend((v.field, v.description) for v in bad.field_violations)
    return found


def _with(**fields: object) -> rs.RetrieveRequest:
    request = rs.RetrieveRequest(query="Why are Python strings immutable?")
    for name, value in fields.items():
        target = request
        *parents, leaf = name.split(".")
        for parent in parents:
            target = getattr(target, parent)
        setattr(target, leaf, value)
    return request


CASES = [
    ("empty", _with(query=""), "query", "must not be empty or whitespace; send the question text"),
    (
        "whitespace",
        _with(query=" \t\n "),
        "query",
        "must not be empty or whitespace; send the question text",
    ),
    (
        "too-long",
        _with(query="x" * 2001),
        "query",
        "is 2001 characters long; the limit is 2000; shorten the query",
    ),
    ("top_k-zero", _with(top_k=0), "top_k", "must be between 1 and 100; got 0"),
    ("top_k-negative", _with(top_k=-3), "top_k", "must be between 1 and 100; got -3"),
    ("top_k-too-big", _with(top_k=101), "top_k", "must be between 1 and 100; got 101"),
    (
        "mmr_lambda-above-1",
        _with(mmr_lambda=1.5),
        "mmr_lambda",
        "must be between 0 and 1 (1 = plain ranking, lower = more diverse); got 1.5",
    ),
    (
        "mmr_lambda-negative",
        _with(mmr_lambda=-0.25),
        "mmr_lambda",
        "must be between 0 and 1 (1 = plain ranking, lower = more diverse); got -0.25",
    ),
    (
        "max_hits_per_document-negative",
        _with(max_hits_per_document=-1),
        "max_hits_per_document",
        "must be between 0 and 100 (0 = no limit); got -1",
    ),
    (
        "budget-negative",
        _with(**{"budget.max_tokens": -5}),
        "budget.max_tokens",
        "must be between 1 and 200000; got -5",
    ),
    (
        "budget-chars-zero",
        _with(**{"budget.max_chars": 0}),
        "budget.max_chars",
        "must be between 1 and 2000000; got 0",
    ),
    (
        "mode-unknown",
        _with(**{"hybrid.mode": 42}),
        "hybrid.mode",
        "unknown RetrievalMode value 42; use one of RETRIEVAL_MODE_DENSE, RETRIEVAL_MODE_LEXICAL, RETRIEVAL_MODE_HYBRID",
    ),
    (
        "fusion-unknown",
        _with(**{"hybrid.fusion": 9}),
        "hybrid.fusion",
        "unknown FusionMethod value 9; use one of FUSION_METHOD_RRF, FUSION_METHOD_WEIGHTED, "
        "FUSION_METHOD_MAX, FUSION_METHOD_DBSF",
    ),
    (
        "risk-unknown",
        _with(max_risk_level=7),
        "max_risk_level",
        "unknown RiskLevel value 7; use one of RISK_LEVEL_NONE, RISK_LEVEL_LOW, RISK_LEVEL_MEDIUM, RISK_LEVEL_HIGH",
    ),
    (
        "weight-nan",
        _with(**{"hybrid.dense_weight": float("nan")}),
        "hybrid.dense_weight",
        "must be a finite number >= 0",
    ),
    (
        "rrf_k-zero",
        _with(**{"hybrid.rrf_k": 0}),
        "hybrid.rrf_k",
        "must be >= 1 (60 is the usual choice)",
    ),
    (
        "bad-collection-name",
        _with(collection="Bad Name!"),
        "collection",
        "'Bad Name!' is not a valid collection name; use 1-63 characters of a-z, 0-9, '_' and '-', "
        "starting with a letter or digit",
    ),
]


@pytest.mark.parametrize(
    ("request_", "field", "description"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_invalid_argument_names_the_field(
    retrieval: rs_grpc.RetrievalServiceStub,
    request_: rs.RetrieveRequest,
    field: str,
    description: str,
) -> None:
    error = _error(retrieval, request_)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == f"{field}: {description}"
    assert _violations(error) == [(field, description)]


def test_several_violations_are_reported_together(retrieval: rs_grpc.RetrievalServiceStub) -> None:
    error = _error(retrieval, _with(query="", top_k=0))
    assert [f for f, _ in _violations(error)] == ["query", "top_k"]


def test_unknown_collection_is_not_found(retrieval: rs_grpc.RetrievalServiceStub) -> None:
    error = _error(retrieval, _with(collection="no-such-collection"))
    assert error.code() is grpc.StatusCode.NOT_FOUND
    assert error.details() == (
        "collection 'no-such-collection' does not exist; create it with CreateCollection "
        "or list collections with ListCollections"
    )


def test_malformed_utf8_is_invalid_argument_not_internal(channel: grpc.Channel) -> None:
    raw = channel.unary_unary("/groundwire.v1.RetrievalService/Retrieve")
    payload = b"\x0a\x04\xff\xfe\xfd\xfc"  # field 1 (query), 4 bytes of invalid UTF-8
    with pytest.raises(grpc.RpcError) as info:
        raw(payload, timeout=30)
    assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "groundwire.v1.RetrieveRequest" in info.value.details()


def test_oversized_message_is_resource_exhausted(channel: grpc.Channel) -> None:
    raw = channel.unary_unary("/groundwire.v1.RetrievalService/Retrieve")
    with pytest.raises(grpc.RpcError) as info:
        raw(b"\x0a" + b"\xff\xff\xff\x0f" + b"a" * (33 * 1024 * 1024), timeout=60)
    assert info.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
