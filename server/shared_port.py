"""The TCP port several server processes share (SO_REUSEPORT).

grpc sets SO_REUSEPORT by default; server/app.py turns it off for a single process, so a second
server started on a port in use fails with "could not bind" instead of silently taking half of
its connections. Several processes of one server need it on, so before the first of them binds,
`reserve_shared_port` checks with a plain socket (no SO_REUSEPORT, which cannot bind a port
anybody listens on, with or without it) that the port is free, and resolves port 0 to one free
port that every process then binds.
"""

from __future__ import annotations

import socket


def reserve_shared_port(host: str, port: int) -> int:
    """The port to share: `port` itself, or a free one for 0; OSError naming the setting to
    change when another process listens there."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise OSError(f"cannot resolve server.host {host!r}: {exc}; pick another") from None
    chosen = port
    for family, kind, protocol, _, address in infos:
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as grpc does
            try:
                probe.bind((address[0], chosen, *address[2:]))
            except OSError as exc:
                raise OSError(
                    f"could not bind {host}:{chosen} ({exc.strerror}); pick another server.port"
                ) from None
            chosen = probe.getsockname()[1]
    return chosen
