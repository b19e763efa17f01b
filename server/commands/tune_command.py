"""`groundwire tune --collection NAME`: call TuneCollection on a running server, print the report."""

from __future__ import annotations

from google.protobuf.json_format import MessageToJson

from groundwire import GroundwireError
from server.commands.client_channel import Endpoint, exit_on_error, open_client

TUNE_TIMEOUT_S = 24 * 3600.0
"""Training and re-embedding take minutes to hours on a CPU: the call gets a day."""


def run_tune(
    endpoint: Endpoint,
    collection: str,
    bounds: dict[str, float | int | None],
    as_json: bool,
) -> None:
    """Tune the collection (bounds: max_steps, max_epochs, max_pairs, max_seconds; None keeps
    the server's) and print what was done."""
    with open_client(endpoint, TUNE_TIMEOUT_S) as client:
        try:
            response = client.tune_collection(collection, **bounds)  # type: ignore[arg-type]
        except GroundwireError as error:
            exit_on_error(error)
    if as_json:
        print(MessageToJson(response, indent=2))
        return
    r = response
    print(
        f"tuned {collection or 'the default collection'}: model {r.model_id}\n"
        f"  pairs {r.pairs} ({r.train_pairs} train, {r.held_out_pairs} held out)\n"
        f"  {r.epochs} epoch(s), {r.steps} steps, stopped: {r.stopped_because}\n"
        f"  held-out top-1 {r.held_out_accuracy_before:.3f} -> {r.held_out_accuracy_after:.3f}\n"
        f"  {r.chunks} chunks and {r.section_vectors} section vectors re-embedded; "
        f"train {r.train_seconds:.1f}s, re-embed {r.reembed_seconds:.1f}s + sections "
        f"{r.section_seconds:.1f}s, total {r.total_seconds:.1f}s"
    )
