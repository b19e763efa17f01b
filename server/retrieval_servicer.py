"""RetrievalService: thin edge over the retrieval pipeline."""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncIterator
from dataclasses import replace

from core.catalog.collection_config import validate_collection_name
from core.models import RiskLevel
from core.retrieve.request import RetrievalRequest
from groundwire.v1 import retrieval_service_pb2 as rs
from server.answer_validation import validate_answer
from server.blocking import run_blocking
from server.cache_clearing import CacheClear, ClearRequest, clear_local
from server.conversions import answer_event_to_proto, clear_cache_response, result_to_proto
from server.handlers import Context
from server.principal import Role, current_principal
from server.reader_caches import reader_wait_s
from server.retrieve_validation import validate_retrieve
from server.rpc_declaration import rpc
from server.runtime import Runtime

SERVICE = rs.DESCRIPTOR.services_by_name["RetrievalService"]


class RetrievalServicer:
    """Validates, converts, calls core, converts back."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    @rpc("Retrieve", Role.READER, needs_loaded=True)
    async def retrieve(self, request: rs.RetrieveRequest, context: Context) -> rs.RetrieveResponse:
        """Retrieve: see the proto."""
        settings = self._runtime.settings
        domain = scoped(
            validate_retrieve(request, settings.retrieval, settings.storage.default_collection)
        )
        runtime = self._runtime
        waiting = functools.partial(run_blocking, context, runtime.executor)
        if settings.server.await_query_embeddings:
            offload = functools.partial(run_blocking, context, runtime.retrieval_executor)
            result = await runtime.pipeline.retrieve_async(domain, offload, waiting)
        else:  # a worker waits for the embedding: the larger pool
            result = await waiting(runtime.pipeline.retrieve, domain)
        return result_to_proto(result, domain.budget.max_tokens, domain.budget.max_chars)

    @rpc("ClearCache", Role.WRITER, needs_loaded=True)
    async def clear_cache(
        self, request: rs.ClearCacheRequest, context: Context
    ) -> rs.ClearCacheResponse:
        """ClearCache: see the proto."""
        runtime = self._runtime
        tenant = current_principal().tenant
        collection = None
        if request.collection:
            collection = validate_collection_name(request.collection)
            runtime.catalog.get(tenant, collection)  # NotFound for unknown (or foreign) names
        chosen = ClearRequest(tenant, collection)
        retrieval, embedding = clear_local(runtime, chosen)
        cleared = [CacheClear(0, os.getpid(), True, retrieval, embedding)]
        if runtime.reader_caches is not None:  # the primary of several processes
            wait = reader_wait_s(context.time_remaining())
            cleared += await runtime.reader_caches.clear_caches(chosen, wait)
        return clear_cache_response(cleared)

    @rpc("Answer", Role.READER, needs_loaded=True)
    async def answer(
        self, request: rs.AnswerRequest, context: Context
    ) -> AsyncIterator[rs.AnswerResponse]:
        """Answer: see the proto. Cancellation closes the generator, which stops upstream work."""
        runtime = self._runtime
        settings = runtime.settings
        domain = validate_answer(
            request,
            settings.retrieval,
            settings.storage.default_collection,
            runtime.prompts.names(),
        )
        domain = replace(domain, retrieval=scoped(domain.retrieval))
        offload = waiting = None
        if settings.server.await_query_embeddings:
            offload = functools.partial(run_blocking, context, runtime.retrieval_executor)
            waiting = functools.partial(run_blocking, context, runtime.executor)
        stream = runtime.answers.answer(domain, offload, waiting)
        try:
            async for event in stream:
                yield answer_event_to_proto(event)
        finally:
            await stream.aclose()


def scoped(request: RetrievalRequest) -> RetrievalRequest:
    """The request bound to the caller's tenant; HIGH-risk chunks only for admins."""
    principal = current_principal()
    if request.max_risk is RiskLevel.HIGH:
        principal.require(Role.ADMIN, "max_risk_level RISK_LEVEL_HIGH")
    return replace(request, tenant=principal.tenant)
