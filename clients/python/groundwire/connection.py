"""Where and how to connect: address, TLS (CA file, mutual TLS), API key, channel options."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import grpc

MAX_MESSAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Connection:
    """How a client reaches one groundwire server.

    TLS is on when `ca_file` or `cert_file` is set (`ca_file` empty: the system roots); mutual TLS
    when `cert_file` and `key_file` are set. `api_key` is sent on every call as
    `authorization: Bearer <key>`.
    """

    target: str
    """host:port, or any gRPC target string ("dns:///gw.example.com:443")."""
    api_key: str = field(default="", repr=False)
    ca_file: str | Path = ""
    """PEM bundle of the CA that signed the server's certificate."""
    cert_file: str | Path = ""
    """PEM client certificate for mutual TLS."""
    key_file: str | Path = ""
    """PEM private key of `cert_file`."""
    server_name: str = ""
    """Overrides the name checked against the server certificate (default: the target host)."""
    options: tuple[tuple[str, int | str], ...] = ()
    """Extra gRPC channel arguments."""

    def __post_init__(self) -> None:
        if not self.target:
            raise ValueError("target must be host:port of a groundwire server")
        if bool(self.cert_file) != bool(self.key_file):
            raise ValueError("mutual TLS needs both cert_file and key_file")

    @property
    def uses_tls(self) -> bool:
        """Whether the channel is encrypted."""
        return bool(self.ca_file or self.cert_file)

    def channel_credentials(self) -> grpc.ChannelCredentials:
        """TLS credentials from the configured PEM files."""
        return grpc.ssl_channel_credentials(
            root_certificates=_read(self.ca_file),
            private_key=_read(self.key_file),
            certificate_chain=_read(self.cert_file),
        )

    def channel_options(self) -> list[tuple[str, int | str]]:
        """Channel arguments: 64 MiB messages, the TLS name override, then `options`."""
        options: list[tuple[str, int | str]] = [
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ]
        if self.server_name:
            options.append(("grpc.ssl_target_name_override", self.server_name))
        return [*options, *self.options]

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """Metadata sent on every call."""
        return (("authorization", f"Bearer {self.api_key}"),) if self.api_key else ()

    def open_channel(self) -> grpc.Channel:
        """A synchronous channel (connects lazily)."""
        if self.uses_tls:
            return grpc.secure_channel(
                self.target, self.channel_credentials(), options=self.channel_options()
            )
        return grpc.insecure_channel(self.target, options=self.channel_options())

    def open_aio_channel(self) -> grpc.aio.Channel:
        """An asyncio channel (connects lazily); call from within the event loop that uses it."""
        if self.uses_tls:
            return grpc.aio.secure_channel(
                self.target, self.channel_credentials(), options=self.channel_options()
            )
        return grpc.aio.insecure_channel(self.target, options=self.channel_options())


def _read(path: str | Path) -> bytes | None:
    return Path(path).read_bytes() if path else None


def connection_for(
    target: str | Connection,
    *,
    api_key: str = "",
    ca_file: str | Path = "",
    cert_file: str | Path = "",
    key_file: str | Path = "",
    server_name: str = "",
) -> Connection:
    """`target` itself when it is a Connection, else a Connection from the keyword options."""
    if isinstance(target, Connection):
        return target
    return Connection(
        target,
        api_key=api_key,
        ca_file=ca_file,
        cert_file=cert_file,
        key_file=key_file,
        server_name=server_name,
    )
