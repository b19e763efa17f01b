"""`groundwire answer TEXT`: stream an answer from a running server."""

from __future__ import annotations

import grpc

from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.commands.client_channel import Endpoint, exit_on_rpc_error, open_channel


def run_answer(endpoint: Endpoint, request: rs.AnswerRequest) -> None:
    """Print deltas as they arrive, then the validated citations."""
    stub = rs_grpc.RetrievalServiceStub(open_channel(endpoint))
    try:
        for event in stub.Answer(request, timeout=300):
            kind = event.WhichOneof("event")
            if kind == "delta":
                print(event.delta.text, end="", flush=True)
            elif kind == "summary":
                summary = event.summary
                print()
                print(
                    f"sources ({summary.generator}, {summary.model}; faithfulness {summary.faithfulness:.2f}, "
                    f"{summary.invalid_citations} invalid citation(s) removed):"
                )
                for citation in summary.citations:
                    print(f"  {citation.tag} {' > '.join(citation.section_path)}")
    except grpc.RpcError as error:
        exit_on_rpc_error(error)
