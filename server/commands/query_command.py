"""`groundwire query TEXT`: call Retrieve on a running server and print the hits."""

from __future__ import annotations

from google.protobuf.json_format import MessageToJson

from groundwire import GroundwireError
from groundwire.retrieve_options import RetrieveOptions
from server.commands.client_channel import Endpoint, exit_on_error, open_client

QUERY_TIMEOUT_S = 60.0


def run_query(endpoint: Endpoint, text: str, options: RetrieveOptions, as_json: bool) -> None:
    """Print hits as a list, or the whole response as JSON."""
    with open_client(endpoint, QUERY_TIMEOUT_S) as client:
        try:
            response = client.retrieve(text, **options)
        except GroundwireError as error:
            exit_on_error(error)
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
