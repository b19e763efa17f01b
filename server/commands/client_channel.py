"""Channel set-up shared by the client-side commands."""

from __future__ import annotations

import sys

import grpc

MAX_MESSAGE = 64 * 1024 * 1024


def open_channel(target: str) -> grpc.Channel:
    """A channel to `target` that fails fast with a readable message if nothing listens there."""
    channel = grpc.insecure_channel(
        target,
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE),
            ("grpc.max_send_message_length", MAX_MESSAGE),
        ],
    )
    try:
        grpc.channel_ready_future(channel).result(timeout=10)
    except grpc.FutureTimeoutError:
        sys.exit(
            f"error: cannot reach a groundwire server at {target}; start one with `groundwire serve`"
        )
    return channel


def exit_on_rpc_error(error: grpc.RpcError) -> None:
    """Print a failed RPC's status and message, then exit non-zero."""
    sys.exit(f"error: {error.code().name}: {error.details()}")
