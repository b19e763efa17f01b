"""Answer through the real server with the default (extractive) generator."""

from __future__ import annotations

import re

import grpc
import pytest

from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc

TAG = re.compile(r"\[DOC:[^\]|]+\|\s*CHUNK:[^\]]+\]")
NOTICE = "Extractive answer (no language model configured)"


def _answer(
    stub: rs_grpc.RetrievalServiceStub, query: str, **fields: object
) -> list[rs.AnswerResponse]:
    request = rs.AnswerRequest(retrieve=rs.RetrieveRequest(query=query, top_k=5), **fields)
    return list(stub.Answer(request, timeout=120))


def test_stream_is_started_then_deltas_then_summary(
    retrieval: rs_grpc.RetrievalServiceStub,
) -> None:
    events = _answer(retrieval, "Why are Python strings immutable?")
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "started" and kinds[-1] == "summary"
    assert set(kinds[1:-1]) == {"delta"} and len(kinds) >= 4
    started, summary = events[0].started, events[-1].summary
    in_context = [h.chunk.has_code for h in started.retrieval.hits if h.in_context]
    assert started.template == ("code_qa" if sum(in_context) * 2 > len(in_context) else "qa")
    assert started.retrieval.hits and started.retrieval.context.citations
    assert summary.text == "".join(e.delta.text for e in events[1:-1])
    assert summary.generator == "extractive" and summary.model.startswith("extractive:")
    assert summary.finish_reason == "stop"
    assert [t.stage for t in summary.timings] == ["retrieval", "first_token", "total"]


def test_every_sentence_is_cited_with_a_context_chunk(
    retrieval: rs_grpc.RetrievalServiceStub,
) -> None:
    events = _answer(retrieval, "How do I copy an object in Python?")
    context_tags = {c.tag for c in events[0].started.retrieval.context.citations}
    summary = events[-1].summary
    lines = [line for line in summary.text.splitlines() if line.strip()]
    assert lines[0].startswith(NOTICE)
    for line in lines[1:]:
        tags = TAG.findall(line)
        assert tags and set(tags) <= context_tags, line
    assert summary.invalid_citations == 0
    assert summary.faithfulness == pytest.approx(1.0)
    assert summary.citations and {c.tag for c in summary.citations} <= context_tags


def test_extractive_answers_are_deterministic(retrieval: rs_grpc.RetrievalServiceStub) -> None:
    first = _answer(retrieval, "How do I read a file line by line?")[-1].summary.text
    second = _answer(retrieval, "How do I read a file line by line?")[-1].summary.text
    assert first == second


def test_explicit_template_is_used(retrieval: rs_grpc.RetrievalServiceStub) -> None:
    events = _answer(retrieval, "What is a lambda?", template="summarize")
    assert events[0].started.template == "summarize"


def test_rewrite_with_extractive_generator_keeps_the_original_query(
    retrieval: rs_grpc.RetrievalServiceStub,
) -> None:
    events = _answer(retrieval, "What is a lambda?", rewrite=True)
    assert list(events[-1].summary.rewritten_queries) == ["What is a lambda?"]


@pytest.mark.parametrize(
    ("fields", "details"),
    [
        (
            {"template": "poem"},
            "template: unknown template 'poem'; installed: code_qa, qa, summarize",
        ),
        ({"temperature": 3.0}, "temperature: must be between 0 and 2"),
        ({"max_tokens": 0}, "max_tokens: must be between 1 and 8192"),
    ],
    ids=["unknown-template", "temperature", "max-tokens"],
)
def test_bad_answer_requests_are_invalid_argument(
    retrieval: rs_grpc.RetrievalServiceStub, fields: dict[str, object], details: str
) -> None:
    with pytest.raises(grpc.RpcError) as info:
        _answer(retrieval, "What is a lambda?", **fields)
    assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details() == details


def test_retrieve_fields_are_prefixed(retrieval: rs_grpc.RetrievalServiceStub) -> None:
    with pytest.raises(grpc.RpcError) as info:
        _answer(retrieval, "   ")
    assert (
        info.value.details()
        == "retrieve.query: must not be empty or whitespace; send the question text"
    )


def test_unknown_collection_ends_the_stream_with_not_found(
    retrieval: rs_grpc.RetrievalServiceStub,
) -> None:
    request = rs.AnswerRequest(
        retrieve=rs.RetrieveRequest(query="What is a lambda?", collection="ghost")
    )
    with pytest.raises(grpc.RpcError) as info:
        list(retrieval.Answer(request, timeout=60))
    assert info.value.code() is grpc.StatusCode.NOT_FOUND
