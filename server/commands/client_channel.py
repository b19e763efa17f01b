"""Channel set-up shared by the client-side commands: TLS, API key metadata, fail-fast dialing."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from server.settings import ClientSettings

MAX_MESSAGE = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a client command connects and with which credentials."""

    target: str
    client: ClientSettings = field(default_factory=ClientSettings)

    def api_key(self) -> str:
        """The API key from settings or its file; empty when none is configured."""
        if self.client.api_key:
            return self.client.api_key
        if self.client.api_key_file:
            return Path(self.client.api_key_file).read_text("utf-8").strip()
        return ""


class _BearerKey(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
):
    """Adds `authorization: Bearer <key>` to every call."""

    def __init__(self, key: str) -> None:
        self._header = ("authorization", f"Bearer {key}")

    def _with_key(self, details: Any) -> Any:
        metadata = [*(details.metadata or ()), self._header]
        return details._replace(metadata=metadata)

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        return continuation(self._with_key(details), request)

    def intercept_unary_stream(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        return continuation(self._with_key(details), request)

    def intercept_stream_unary(
        self, continuation: Callable[..., Any], details: Any, requests: Any
    ) -> Any:
        return continuation(self._with_key(details), requests)


def open_channel(endpoint: Endpoint | str) -> grpc.Channel:
    """A channel to the endpoint that fails fast with a readable message if nothing listens there."""
    if isinstance(endpoint, str):
        endpoint = Endpoint(endpoint)
    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE),
        ("grpc.max_send_message_length", MAX_MESSAGE),
    ]
    client = endpoint.client
    if client.tls_ca_file or client.tls_cert_file:
        credentials = grpc.ssl_channel_credentials(
            root_certificates=_read(client.tls_ca_file),
            private_key=_read(client.tls_key_file),
            certificate_chain=_read(client.tls_cert_file),
        )
        channel = grpc.secure_channel(endpoint.target, credentials, options=options)
    else:
        channel = grpc.insecure_channel(endpoint.target, options=options)
    try:
        grpc.channel_ready_future(channel).result(timeout=10)
    except grpc.FutureTimeoutError:
        sys.exit(
            f"error: cannot reach a groundwire server at {endpoint.target}; start one with "
            "`groundwire serve` (or check client.tls_ca_file when the server uses TLS)"
        )
    key = endpoint.api_key()
    return grpc.intercept_channel(channel, _BearerKey(key)) if key else channel


def _read(path: str) -> bytes | None:
    return Path(path).read_bytes() if path else None


def exit_on_rpc_error(error: grpc.RpcError) -> None:
    """Print a failed RPC's status and message, then exit non-zero."""
    sys.exit(f"error: {error.code().name}: {error.details()}")
