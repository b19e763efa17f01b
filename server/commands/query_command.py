"""`groundwire query TEXT`: call Retrieve on a running server and print the hits."""

from __future__ import annotations

import grpc
from google.protobuf.json_format import MessageToJson

from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.commands.client_channel import Endpoint, exit_on_rpc_error, open_channel

MODES = {
    "dense": rs.RETRIEVAL_MODE_DENSE,
    "lexical": rs.RETRIEVAL_MODE_LEXICAL,
    "hybrid": rs.RETRIEVAL_MODE_HYBRID,
}
FUSIONS = {
    "rrf": rs.FUSION_METHOD_RRF,
    "weighted": rs.FUSION_METHOD_WEIGHTED,
    "max": rs.FUSION_METHOD_MAX,
    "dbsf": rs.FUSION_METHOD_DBSF,
}


def build_request(
    text: str, collection: str, top_k: int, mode: str | None, fusion: str | None
) -> rs.RetrieveRequest:
    """A RetrieveRequest from command-line choices; unset options keep the server defaults."""
    request = rs.RetrieveRequest(query=text, collection=collection, top_k=top_k)
    if mode:
        request.hybrid.mode = MODES[mode]
    if fusion:
        request.hybrid.fusion = FUSIONS[fusion]
    return request


def run_query(endpoint: Endpoint, request: rs.RetrieveRequest, as_json: bool) -> None:
    """Print hits as a list, or the whole response as JSON."""
    stub = rs_grpc.RetrievalServiceStub(open_channel(endpoint))
    try:
        response = stub.Retrieve(request, timeout=60)
    except grpc.RpcError as error:
        exit_on_rpc_error(error)
    if as_json:
        print(MessageToJson(response, indent=2))
        return
    for hit in response.hits:
        where = " > ".join(hit.chunk.section_path) or "(no section)"
        snippet = " ".join(hit.chunk.text.split())[:160]
        print(f"{hit.rank:>2}. {hit.score:.4f}  {hit.chunk.chunk_id}  [{where}]\n    {snippet}")
    for warning in response.warnings:
        print(f"warning: {warning}")
    stages = ", ".join(f"{t.stage} {t.millis:.1f}ms" for t in response.timings)
    print(f"({len(response.hits)} hits from {response.collection}; {stages})")
