"""`groundwire answer TEXT`: stream an answer from a running server."""

from __future__ import annotations

import json

from google.protobuf.json_format import MessageToDict

from groundwire import AnswerFinished, AnswerStarted, GroundwireError, TokenDelta
from groundwire.answer_stream import AnswerStream
from groundwire.retrieve_options import AnswerOptions, RetrieveOptions
from groundwire.v1 import retrieval_service_pb2 as rs
from server.commands.client_channel import Endpoint, exit_on_error, open_client

ANSWER_TIMEOUT_S = 300.0


def run_answer(
    endpoint: Endpoint,
    text: str,
    retrieve: RetrieveOptions,
    generation: AnswerOptions,
    as_json: bool,
) -> None:
    """Print deltas as they arrive, then the validated citations (or JSON Lines with --json)."""
    with open_client(endpoint, ANSWER_TIMEOUT_S) as client:
        stream = client.answer(text, **generation, **retrieve)
        try:
            with stream:
                _print_json_lines(stream) if as_json else _print_text(stream)
        except GroundwireError as error:
            exit_on_error(error)


def _print_json_lines(stream: AnswerStream) -> None:
    """One JSON object per event, in the proto JSON mapping of AnswerResponse."""
    for event in stream:
        if isinstance(event, AnswerStarted):
            message = rs.AnswerResponse(
                started=rs.AnswerStarted(retrieval=event.retrieval, template=event.template)
            )
        elif isinstance(event, TokenDelta):
            message = rs.AnswerResponse(delta=rs.AnswerDelta(text=event.text))
        else:
            message = rs.AnswerResponse(summary=event.summary)
        print(json.dumps(MessageToDict(message)), flush=True)


def _print_text(stream: AnswerStream) -> None:
    for event in stream:
        if isinstance(event, TokenDelta):
            print(event.text, end="", flush=True)
        elif isinstance(event, AnswerFinished):
            summary = event.summary
            print()
            print(
                f"sources ({summary.generator}, {summary.model}; faithfulness {summary.faithfulness:.2f}, "
                f"{summary.invalid_citations} invalid citation(s) removed):"
            )
            for citation in summary.citations:
                print(f"  {citation.tag} {' > '.join(citation.section_path)}")
