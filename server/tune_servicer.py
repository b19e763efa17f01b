"""IndexService.TuneCollection: fine-tune a collection's model copy and re-embed it (core/tune)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading

from core.errors import InvalidArgument
from core.tune.options import TuneOptions
from core.tune.tuner import TuneReport
from groundwire.v1 import index_service_pb2 as ix
from server.blocking import run_blocking
from server.handlers import Context
from server.index_validation import collection_or_default
from server.principal import Role, current_principal
from server.rpc_declaration import rpc
from server.runtime import Runtime


class CollectionTuning:
    """Validates a TuneCollectionRequest, runs the tuner on a worker thread, reports."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    @rpc("TuneCollection", Role.ADMIN, needs_loaded=True)
    async def tune_collection(
        self, request: ix.TuneCollectionRequest, context: Context
    ) -> ix.TuneCollectionResponse:
        """TuneCollection: see the proto."""
        runtime = self._runtime
        default = runtime.settings.storage.default_collection
        name = collection_or_default(request.collection, default, "collection")
        runtime.catalog.require_file_maintenance("TuneCollection")
        collection = runtime.catalog.get(current_principal().tenant, name)
        options = tune_options(runtime.settings.tune, request)
        cancelled = threading.Event()
        try:
            report = await run_blocking(
                context,
                runtime.executor,
                lambda: runtime.tuner.tune(collection, options, should_stop=cancelled.is_set),
            )
        except asyncio.CancelledError:
            cancelled.set()  # the worker stops at its next step and leaves the collection as it was
            raise
        return tune_response(report)


def tune_options(base: TuneOptions, request: ix.TuneCollectionRequest) -> TuneOptions:
    """The server's bounds with the request's overrides; InvalidArgument naming a bad field."""
    overrides: dict[str, float | int] = {}
    for field in ("max_steps", "max_epochs", "max_pairs", "max_seconds"):
        if request.HasField(field):
            overrides[field] = getattr(request, field)
    try:
        return dataclasses.replace(base, **overrides)  # type: ignore[arg-type]
    except ValueError as exc:
        field = next((f for f in overrides if f in str(exc)), "max_steps")
        raise InvalidArgument.field(field, str(exc)) from None


def tune_response(report: TuneReport) -> ix.TuneCollectionResponse:
    """The report as the proto response."""
    return ix.TuneCollectionResponse(
        model_id=report.model_id,
        pairs=report.pairs,
        train_pairs=report.train_pairs,
        held_out_pairs=report.held_out_pairs,
        epochs=report.epochs,
        steps=report.steps,
        held_out_accuracy_before=report.held_out_before,
        held_out_accuracy_after=report.held_out_after,
        stopped_because=report.stopped_because,
        chunks=report.chunks,
        train_seconds=report.train_seconds,
        reembed_seconds=report.reembed_seconds,
        total_seconds=report.total_seconds,
        section_vectors=report.section_vectors,
        section_seconds=report.section_seconds,
    )
