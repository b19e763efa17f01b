"""Retrieve and Answer requests from keyword options; unset options keep the server defaults."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypedDict, TypeVar

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import retrieval_service_pb2 as rs

T = TypeVar("T")
Mode = Literal["dense", "lexical", "hybrid"]
Fusion = Literal["rrf", "weighted", "max", "dbsf"]

MODES: dict[str, rs.RetrievalMode] = {
    "dense": rs.RETRIEVAL_MODE_DENSE,
    "lexical": rs.RETRIEVAL_MODE_LEXICAL,
    "hybrid": rs.RETRIEVAL_MODE_HYBRID,
}
FUSIONS: dict[str, rs.FusionMethod] = {
    "rrf": rs.FUSION_METHOD_RRF,
    "weighted": rs.FUSION_METHOD_WEIGHTED,
    "max": rs.FUSION_METHOD_MAX,
    "dbsf": rs.FUSION_METHOD_DBSF,
}


def retrieve_request(
    query: str | rs.RetrieveRequest,
    *,
    collection: str = "",
    top_k: int | None = None,
    mode: Mode | None = None,
    fusion: Fusion | None = None,
    filters: common.Filters | None = None,
    budget_tokens: int | None = None,
    budget_chars: int | None = None,
    rerank: bool | None = None,
    score_threshold: float | None = None,
    use_memory: bool = False,
    max_hits_per_document: int | None = None,
    mmr_lambda: float | None = None,
) -> rs.RetrieveRequest:
    """A RetrieveRequest; a RetrieveRequest given as `query` is copied and the options set on it.

    `budget_tokens` or `budget_chars` (not both) caps the assembled context.
    `max_hits_per_document` n lists every document's best n hits before any document's next
    (1: top_k distinct documents when there are that many); `mmr_lambda` below 1 reorders by
    maximal marginal relevance (1 = the plain ranking). Unset: the server's defaults.
    """
    if isinstance(query, rs.RetrieveRequest):
        request = rs.RetrieveRequest()
        request.CopyFrom(query)
    else:
        request = rs.RetrieveRequest(query=query)
    if collection:
        request.collection = collection
    if top_k is not None:
        request.top_k = top_k
    if mode is not None:
        request.hybrid.mode = _choice(MODES, mode, "mode")
    if fusion is not None:
        request.hybrid.fusion = _choice(FUSIONS, fusion, "fusion")
    if filters is not None:
        request.filters.CopyFrom(filters)
    if budget_tokens is not None and budget_chars is not None:
        raise ValueError("give budget_tokens or budget_chars, not both")
    if budget_tokens is not None:
        request.budget.max_tokens = budget_tokens
    if budget_chars is not None:
        request.budget.max_chars = budget_chars
    if rerank is not None:
        request.rerank.enabled = rerank
    if score_threshold is not None:
        request.score_threshold = score_threshold
    if use_memory:
        request.use_memory = True
    if max_hits_per_document is not None:
        request.max_hits_per_document = max_hits_per_document
    if mmr_lambda is not None:
        request.mmr_lambda = mmr_lambda
    return request


def answer_request(
    retrieve: rs.RetrieveRequest,
    *,
    template: str = "",
    temperature: float | None = None,
    max_tokens: int | None = None,
    rewrite: bool = False,
) -> rs.AnswerRequest:
    """An AnswerRequest around a RetrieveRequest (template "": the server picks one)."""
    request = rs.AnswerRequest(template=template, rewrite=rewrite)
    request.retrieve.CopyFrom(retrieve)
    if temperature is not None:
        request.temperature = temperature
    if max_tokens is not None:
        request.max_tokens = max_tokens
    return request


def _choice(table: Mapping[str, T], value: str, name: str) -> T:
    try:
        return table[value]
    except KeyError:
        raise ValueError(f"{name} must be one of {', '.join(table)}; got {value!r}") from None


class RetrieveOptions(TypedDict, total=False):
    """The keyword options of `retrieve_request` (and of the clients' retrieve and answer)."""

    collection: str
    top_k: int | None
    mode: Mode | None
    fusion: Fusion | None
    filters: common.Filters | None
    budget_tokens: int | None
    budget_chars: int | None
    rerank: bool | None
    score_threshold: float | None
    use_memory: bool
    max_hits_per_document: int | None
    mmr_lambda: float | None


class AnswerOptions(TypedDict, total=False):
    """The generation options of `answer_request`."""

    template: str
    temperature: float | None
    max_tokens: int | None
    rewrite: bool
