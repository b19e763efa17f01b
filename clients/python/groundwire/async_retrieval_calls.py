"""RetrievalService calls of the asyncio client: Retrieve and the Answer stream."""

from __future__ import annotations

from typing import Unpack

from groundwire.async_answer_stream import AsyncAnswerStream
from groundwire.async_invoker import AsyncInvoker
from groundwire.retrieve_options import (
    AnswerOptions,
    RetrieveOptions,
    answer_request,
    retrieve_request,
)
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc


class AsyncRetrievalCalls:
    """Retrieve and Answer; mixed into `AsyncClient`."""

    _invoker: AsyncInvoker
    _retrieval: rs_grpc.RetrievalServiceStub

    async def retrieve(
        self,
        query: str | rs.RetrieveRequest,
        *,
        timeout: float | None = None,
        **options: Unpack[RetrieveOptions],
    ) -> rs.RetrieveResponse:
        """Ranked hits and the assembled, cited context for `query` (options as `Client.retrieve`)."""
        request = retrieve_request(query, **options)
        return await self._invoker.unary(self._retrieval.Retrieve, request, timeout)

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
    ) -> AsyncAnswerStream:
        """Stream a cited answer (`async for event in client.answer(...)`; options as `Client.answer`)."""
        generation: AnswerOptions = {
            "template": template,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "rewrite": rewrite,
        }
        request = answer_request(retrieve_request(query, **options), **generation)
        return AsyncAnswerStream(
            lambda attach: self._invoker.server_stream(
                self._retrieval.Answer, request, timeout, attach
            )
        )
