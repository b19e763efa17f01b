"""Per-document hit limits and MMR through a real server over the bundled FAQ corpus."""

from __future__ import annotations

from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc

QUESTION = "How do I copy an object in Python?"


def _hits(stub: rs_grpc.RetrievalServiceStub, **fields: object) -> list[rs.Hit]:
    request = rs.RetrieveRequest(query=QUESTION, top_k=10, **fields)  # type: ignore[arg-type]
    return list(stub.Retrieve(request, timeout=120).hits)


def _ids(hits: list[rs.Hit]) -> list[str]:
    return [hit.chunk.chunk_id for hit in hits]


def test_mmr_lambda_1_is_the_plain_ranking(retrieval: rs_grpc.RetrievalServiceStub) -> None:
    assert _ids(_hits(retrieval, mmr_lambda=1.0)) == _ids(_hits(retrieval))


def test_mmr_keeps_the_best_hit_first_and_changes_the_rest(
    retrieval: rs_grpc.RetrievalServiceStub,
) -> None:
    plain, diverse = _hits(retrieval), _hits(retrieval, mmr_lambda=0.3)
    assert diverse[0].chunk.chunk_id == plain[0].chunk.chunk_id
    assert [hit.rank for hit in diverse] == list(range(1, len(diverse) + 1))
    assert _ids(diverse) != _ids(plain)


def test_one_hit_per_document_lists_distinct_documents(
    retrieval: rs_grpc.RetrievalServiceStub,
) -> None:
    plain = _hits(retrieval)
    grouped = _hits(retrieval, max_hits_per_document=1)
    documents = [hit.chunk.document_id for hit in grouped]
    first = documents[: len(set(documents))]
    assert len(set(first)) == len(first), documents  # every document once before any twice
    assert len(set(first)) > 1
    assert len({hit.chunk.document_id for hit in plain[: len(first)]}) < len(first), (
        "the plain ranking already had distinct documents: this test shows nothing"
    )
    assert grouped[0].chunk.chunk_id == plain[0].chunk.chunk_id
