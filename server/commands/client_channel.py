"""The groundwire client of the client-side commands: settings to a connected `Client`."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from groundwire import Client, GroundwireError
from server.settings import ClientSettings

CONNECT_TIMEOUT_S = 10.0


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


def open_client(endpoint: Endpoint | str, timeout_s: float = 60.0) -> Client:
    """A connected client, or exit with a readable message if nothing listens at the target.

    `timeout_s` is the default deadline of its calls.
    """
    if isinstance(endpoint, str):
        endpoint = Endpoint(endpoint)
    settings = endpoint.client
    client = Client(
        endpoint.target,
        api_key=endpoint.api_key(),
        ca_file=settings.tls_ca_file,
        cert_file=settings.tls_cert_file,
        key_file=settings.tls_key_file,
        timeout=timeout_s,
    )
    try:
        client.wait_until_connected(CONNECT_TIMEOUT_S)
    except GroundwireError:
        client.close()
        sys.exit(
            f"error: cannot reach a groundwire server at {endpoint.target}; start one with "
            "`groundwire serve` (or check client.tls_ca_file when the server uses TLS)"
        )
    return client


def exit_on_error(error: GroundwireError) -> NoReturn:
    """Print a failed call's status, message and field violations, then exit non-zero."""
    lines = [f"error: {error.code.name}: {error.message}"]
    for violation in error.field_violations:
        line = f"{violation.field}: {violation.description}"
        if line not in error.message:
            lines.append(f"  {line}")
    sys.exit("\n".join(lines))
