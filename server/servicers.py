"""Which servicers implement each gRPC service: the one table the server serves and tests check."""

from __future__ import annotations

from google.protobuf.descriptor import ServiceDescriptor

from server.index_maintenance import IndexMaintenance
from server.index_servicer import SERVICE as INDEX_SERVICE
from server.index_servicer import IndexServicer
from server.retrieval_servicer import SERVICE as RETRIEVAL_SERVICE
from server.retrieval_servicer import RetrievalServicer
from server.runtime import Runtime
from server.tune_servicer import CollectionTuning


def servicers(runtime: Runtime) -> dict[ServiceDescriptor, list[object]]:
    """The objects whose `@rpc` methods implement each service, over `runtime`."""
    return {
        RETRIEVAL_SERVICE: [RetrievalServicer(runtime)],
        INDEX_SERVICE: [
            IndexServicer(runtime),
            IndexMaintenance(runtime),
            CollectionTuning(runtime),
        ],
    }
