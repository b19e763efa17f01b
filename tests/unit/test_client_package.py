"""groundwire-client as a package: its pins, its pure parts (retry delays, error details, batches)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grpc
import pytest
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2

from groundwire import Document, FieldViolation, GroundwireError, RetryPolicy
from groundwire.errors import STATUS_DETAILS_KEY, error_from_status
from groundwire.retrieve_options import retrieve_request
from groundwire.upsert_batches import document_batches, merge_responses
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import retrieval_service_pb2 as rs

ROOT = Path(__file__).parents[2]


def _dependencies(pyproject: Path) -> set[str]:
    return set(tomllib.loads(pyproject.read_text("utf-8"))["project"]["dependencies"])


def test_the_server_pins_every_client_dependency_at_the_same_version() -> None:
    client = _dependencies(ROOT / "clients" / "python" / "pyproject.toml")
    assert client <= _dependencies(ROOT / "pyproject.toml")
    assert all("==" in pin for pin in client)


def _trailers(*details: object) -> tuple[tuple[str, bytes], ...]:
    status = status_pb2.Status(code=3, message="m")
    for detail in details:
        packed = any_pb2.Any()
        packed.Pack(detail)  # type: ignore[arg-type]
        status.details.append(packed)
    return ((STATUS_DETAILS_KEY, status.SerializeToString()),)


def test_error_carries_field_violations_and_retry_delay() -> None:
    bad = error_details_pb2.BadRequest(
        field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field="top_k", description="too big"),
            error_details_pb2.BadRequest.FieldViolation(field="query", description="empty"),
        ]
    )
    delay = duration_pb2.Duration(seconds=1, nanos=500_000_000)
    error = error_from_status(
        grpc.StatusCode.INVALID_ARGUMENT,
        "two problems",
        _trailers(bad, error_details_pb2.RetryInfo(retry_delay=delay)),
    )
    assert error.field_violations == (
        FieldViolation("top_k", "too big"),
        FieldViolation("query", "empty"),
    )
    assert error.retry_delay_s == 1.5
    assert str(error) == "INVALID_ARGUMENT: two problems"
    plain = error_from_status(grpc.StatusCode.NOT_FOUND, "gone", (("other", "x"),))
    assert (plain.field_violations, plain.retry_delay_s) == ((), None)


def _error(code: grpc.StatusCode, retry_delay_s: float | None = None) -> GroundwireError:
    return GroundwireError(code, "m", retry_delay_s=retry_delay_s)


@pytest.mark.parametrize(
    ("code", "retry_delay_s", "attempt", "expected"),
    [
        (grpc.StatusCode.UNAVAILABLE, None, 1, 0.1),
        (grpc.StatusCode.UNAVAILABLE, None, 2, 0.2),
        (grpc.StatusCode.UNAVAILABLE, None, 3, 0.3),  # capped by max_backoff_s
        (grpc.StatusCode.UNAVAILABLE, 2.5, 1, 2.5),  # RetryInfo wins over the backoff
        (grpc.StatusCode.RESOURCE_EXHAUSTED, 0.7, 1, 0.7),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, None, 1, None),  # a hard limit: not retried
        (grpc.StatusCode.UNAVAILABLE, None, 4, None),  # attempts used up
        (grpc.StatusCode.INVALID_ARGUMENT, 1.0, 1, None),
        (grpc.StatusCode.DEADLINE_EXCEEDED, None, 1, None),
    ],
    ids=[
        "backoff-1", "backoff-2", "backoff-capped", "retry-info", "exhausted-with-info",
        "exhausted-without-info", "last-attempt", "invalid-argument", "deadline",
    ],
)  # fmt: skip
def test_retry_delay(
    code: grpc.StatusCode, retry_delay_s: float | None, attempt: int, expected: float | None
) -> None:
    policy = RetryPolicy(max_attempts=4, initial_backoff_s=0.1, max_backoff_s=0.3, jitter=0)
    assert policy.delay_before_retry(_error(code, retry_delay_s), attempt) == expected


def test_retry_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="max_attempts must be at least 1"):
        RetryPolicy(max_attempts=0)


def test_documents_are_batched_lazily_by_count_and_size() -> None:
    docs = [Document(document_id=f"d{i}", text="x" * 100) for i in range(5)]
    assert [[d.document_id for d in b] for b in document_batches(docs, batch_size=2)] == [
        ["d0", "d1"], ["d2", "d3"], ["d4"],
    ]  # fmt: skip
    by_size = document_batches(iter(docs), batch_size=64, batch_bytes=250)
    assert [len(b) for b in by_size] == [2, 2, 1]
    from_mapping = next(document_batches([{"document_id": "m", "text": "t"}]))
    assert from_mapping == [Document(document_id="m", text="t")]
    with pytest.raises(ValueError, match="batch_size must be 1-256"):
        next(document_batches(docs, batch_size=257))


def test_upsert_responses_merge_in_order() -> None:
    first = ix.UpsertDocumentsResponse(
        results=[ix.DocumentResult(document_id="a")], upserted=1, chunks_written=2, sequence=3
    )
    second = ix.UpsertDocumentsResponse(
        results=[ix.DocumentResult(document_id="b")], failed=1, sequence=4
    )
    merged = merge_responses([first, second])
    assert [r.document_id for r in merged.results] == ["a", "b"]
    assert (merged.upserted, merged.failed, merged.chunks_written, merged.sequence) == (1, 1, 2, 4)


def test_retrieve_options_set_only_what_is_given() -> None:
    request = retrieve_request("q", collection="c", top_k=3, mode="lexical", budget_tokens=50)
    assert request == rs.RetrieveRequest(
        query="q",
        collection="c",
        top_k=3,
        hybrid=rs.HybridParams(mode=rs.RETRIEVAL_MODE_LEXICAL),
        budget=rs.ContextBudget(max_tokens=50),
    )
    assert not retrieve_request("q").HasField("top_k")
    with pytest.raises(ValueError, match="not both"):
        retrieve_request("q", budget_tokens=1, budget_chars=1)


def test_retrieve_options_set_document_grouping_and_mmr() -> None:
    request = retrieve_request("q", max_hits_per_document=1, mmr_lambda=0.5)
    assert request.HasField("max_hits_per_document") and request.max_hits_per_document == 1
    assert request.HasField("mmr_lambda") and request.mmr_lambda == 0.5
    unset = retrieve_request("q")
    assert not unset.HasField("max_hits_per_document") and not unset.HasField("mmr_lambda")
    with pytest.raises(ValueError, match="mode must be one of dense, lexical, hybrid; got 'fast'"):
        retrieve_request("q", mode="fast")  # type: ignore[arg-type]
