"""RetrievalService calls of the synchronous client: Retrieve and the Answer stream."""

from __future__ import annotations

from typing import Unpack

from groundwire.answer_stream import AnswerStream
from groundwire.retrieve_options import (
    AnswerOptions,
    RetrieveOptions,
    answer_request,
    retrieve_request,
)
from groundwire.sync_invoker import SyncInvoker
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc


class RetrievalCalls:
    """Retrieve and Answer; mixed into `Client`."""

    _invoker: SyncInvoker
    _retrieval: rs_grpc.RetrievalServiceStub

    def retrieve(
        self,
        query: str | rs.RetrieveRequest,
        *,
        timeout: float | None = None,
        **options: Unpack[RetrieveOptions],
    ) -> rs.RetrieveResponse:
        """Ranked hits and the assembled, cited context for `query`.

        Options: collection, top_k, mode ("dense" | "lexical" | "hybrid"), fusion, filters
        (a `Filters` message), budget_tokens or budget_chars, rerank, score_threshold, use_memory,
        max_hits_per_document, mmr_lambda.
        `timeout`: seconds for the call, retries included (default: the client's).
        """
        request = retrieve_request(query, **options)
        response: rs.RetrieveResponse = self._invoker.unary(
            self._retrieval.Retrieve, request, timeout
        )
        return response

    def answer(
        self,
        query: str | rs.RetrieveRequest,
        *,
        template: str = "",
        temperature: float | None = None,
        max_tokens: int | None = None,
        rewrite: bool = False,
        timeout: float | None = None,
        **options: Unpack[RetrieveOptions],
    ) -> AnswerStream:
        """Stream a cited answer: AnswerStarted, then TokenDelta events, then AnswerFinished.

        Takes the options of `retrieve` plus template ("" lets the server choose), temperature,
        max_tokens and rewrite. The call starts when iteration starts; `timeout` covers the
        whole stream (default: the client's). Leave early with `stream.cancel()` or `with stream:`.
        """
        generation: AnswerOptions = {
            "template": template,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "rewrite": rewrite,
        }
        request = answer_request(retrieve_request(query, **options), **generation)
        return AnswerStream(
            lambda attach: self._invoker.server_stream(
                self._retrieval.Answer, request, timeout, attach
            )
        )
