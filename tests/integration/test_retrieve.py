"""Retrieve through a real server over the bundled Python FAQ corpus."""

from __future__ import annotations

import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc

MODES = {"dense": rs.RETRIEVAL_MODE_DENSE, "hybrid": rs.RETRIEVAL_MODE_HYBRID}
# (question, the FAQ section that answers it).
QUESTIONS = [
    ("Why are Python strings immutable?", "Why are Python strings immutable?"),
    (
        "How do I make a Python script executable on Unix?",
        "How do I make a Python script executable on Unix?",
    ),
    (
        "Why does Python use indentation for grouping of statements?",
        "Why does Python use indentation for grouping of statements?",
    ),
]
# Paraphrases share few words with the heading: the dense retriever must still find them.
PARAPHRASES = [
    (
        "Is there a way to duplicate an object, shallow or deep?",
        "How do I copy an object in Python?",
    ),
    (
        "Which function lists everything an instance of my class has?",
        "How can I find the methods or attributes of an object?",
    ),
]


def _retrieve(
    stub: rs_grpc.RetrievalServiceStub, query: str, mode: int, top_k: int = 3
) -> rs.RetrieveResponse:
    request = rs.RetrieveRequest(query=query, top_k=top_k)
    request.hybrid.mode = mode
    return stub.Retrieve(request, timeout=60)


@pytest.mark.parametrize("mode", list(MODES), ids=list(MODES))
@pytest.mark.parametrize(("question", "section"), QUESTIONS, ids=[q[:40] for q, _ in QUESTIONS])
def test_known_question_retrieves_its_answer_in_top_3(
    retrieval: rs_grpc.RetrievalServiceStub, mode: str, question: str, section: str
) -> None:
    response = _retrieve(retrieval, question, MODES[mode])
    sections = [hit.chunk.section_path[-1] for hit in response.hits]
    assert section in sections, sections


@pytest.mark.parametrize(("question", "section"), PARAPHRASES, ids=[q[:40] for q, _ in PARAPHRASES])
def test_paraphrased_question_retrieves_its_answer_densely(
    retrieval: rs_grpc.RetrievalServiceStub, question: str, section: str
) -> None:
    response = _retrieve(retrieval, question, rs.RETRIEVAL_MODE_DENSE)
    assert section in [hit.chunk.section_path[-1] for hit in response.hits]


def test_hits_carry_scores_ranks_and_citations(retrieval: rs_grpc.RetrievalServiceStub) -> None:
    retrieval.ClearCache(rs.ClearCacheRequest())  # this test reads every stage's timing
    response = _retrieve(
        retrieval, "How do I copy an object in Python?", rs.RETRIEVAL_MODE_HYBRID, top_k=5
    )
    assert [h.rank for h in response.hits] == [1, 2, 3, 4, 5]
    fused = [h.scores.fused for h in response.hits]
    assert fused == sorted(fused, reverse=True)
    assert all(h.scores.HasField("dense") or h.scores.HasField("bm25") for h in response.hits)
    assert response.collection == "default"
    assert (
        response.mode == rs.RETRIEVAL_MODE_HYBRID and response.fusion == rs.FUSION_METHOD_WEIGHTED
    )
    tags = [c.tag for c in response.context.citations]
    for hit in response.hits:
        if hit.in_context:
            tag = f"[DOC:{hit.chunk.document_id} | CHUNK:{hit.chunk.chunk_id}]"
            assert tag in tags and tag in response.context.text
    assert response.context.token_estimate <= response.context.budget_tokens == 2000
    stages = [t.stage for t in response.timings]
    assert {"embed", "dense", "lexical", "fuse", "context"} <= set(stages)


def test_lexical_mode_scores_are_bm25(retrieval: rs_grpc.RetrievalServiceStub) -> None:
    response = _retrieve(retrieval, "lambda closures in a loop", rs.RETRIEVAL_MODE_LEXICAL, top_k=5)
    assert response.hits and all(
        h.scores.HasField("bm25") and not h.scores.HasField("dense") for h in response.hits
    )
    assert response.fusion == rs.FUSION_METHOD_UNSPECIFIED


@pytest.mark.parametrize(
    "fusion",
    [rs.FUSION_METHOD_RRF, rs.FUSION_METHOD_WEIGHTED, rs.FUSION_METHOD_MAX, rs.FUSION_METHOD_DBSF],
    ids=["rrf", "weighted", "max", "dbsf"],
)
def test_every_fusion_method_runs(retrieval: rs_grpc.RetrievalServiceStub, fusion: int) -> None:
    request = rs.RetrieveRequest(query="Why are Python strings immutable?", top_k=5)
    request.hybrid.fusion = fusion
    response = retrieval.Retrieve(request, timeout=60)
    assert response.fusion == fusion
    assert "Why are Python strings immutable?" in [h.chunk.section_path[-1] for h in response.hits]


def test_character_budget_is_respected(retrieval: rs_grpc.RetrievalServiceStub) -> None:
    request = rs.RetrieveRequest(query="How do I read a file line by line?", top_k=10)
    request.budget.max_chars = 700
    response = retrieval.Retrieve(request, timeout=60)
    assert 0 < response.context.char_count <= 700
    assert len(response.context.text) == response.context.char_count
    assert response.context.budget_chars == 700


def test_filters_restrict_hits(retrieval: rs_grpc.RetrievalServiceStub) -> None:
    request = rs.RetrieveRequest(query="How do I make a Python script executable?", top_k=5)
    request.filters.document_ids.append("faq-windows")
    response = retrieval.Retrieve(request, timeout=60)
    assert response.hits and {h.chunk.document_id for h in response.hits} == {"faq-windows"}
    assert "document_id in ['faq-windows']" in response.applied_filters


DOCUMENT_SOURCE_TYPES = [
    common.SOURCE_TYPE_MARKDOWN,
    common.SOURCE_TYPE_TEXT,
    common.SOURCE_TYPE_HTML,
    common.SOURCE_TYPE_PDF,
]
RISKS = {"default": None, "high": common.RISK_LEVEL_HIGH, "none": common.RISK_LEVEL_NONE}


@pytest.mark.parametrize("risk", list(RISKS), ids=list(RISKS))
@pytest.mark.parametrize("mode", list(MODES), ids=list(MODES))
def test_a_filter_every_chunk_passes_changes_no_hit_score_or_context(
    retrieval: rs_grpc.RetrievalServiceStub, mode: str, risk: str
) -> None:
    """Without filters the pipeline reads only the candidates' risk levels and then the chunks
    of the hits; with a filter it reads every candidate's chunk. Both must give the same hits,
    stage scores, ranks and context, at every risk ceiling."""
    for question, _ in QUESTIONS + PARAPHRASES:
        plain = rs.RetrieveRequest(query=question, top_k=10)
        plain.hybrid.mode = MODES[mode]
        if RISKS[risk] is not None:
            plain.max_risk_level = RISKS[risk]
        filtered = rs.RetrieveRequest()
        filtered.CopyFrom(plain)
        filtered.filters.source_types.extend(DOCUMENT_SOURCE_TYPES)
        expected = retrieval.Retrieve(filtered, timeout=60)
        got = retrieval.Retrieve(plain, timeout=60)
        assert len(got.hits) == 10
        assert list(got.hits) == list(expected.hits), question
        assert got.context == expected.context, question
        assert got.total_candidates == expected.total_candidates


def test_unavailable_features_warn_instead_of_pretending(
    retrieval: rs_grpc.RetrievalServiceStub,
) -> None:
    request = rs.RetrieveRequest(query="What is a lambda?", top_k=3)
    request.rerank.enabled = True
    response = retrieval.Retrieve(request, timeout=60)
    assert (
        "rerank was requested but no reranker is configured; hits are in fused order"
        in response.warnings
    )
