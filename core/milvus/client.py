"""Connecting to Milvus: pymilvus is optional (`pip install 'groundwire[milvus]'`), imported here
only, and one `MilvusClient` per database (tenant), never switched between databases."""

from __future__ import annotations

import importlib
import threading
from typing import Any

from core.errors import FailedPrecondition
from core.milvus.options import MilvusOptions

INSTALL_HINT = "pip install 'groundwire[milvus]'"


def require_pymilvus() -> Any:
    """The pymilvus module; FailedPrecondition naming the install command when it is missing."""
    try:
        return importlib.import_module("pymilvus")
    except ImportError:
        raise FailedPrecondition(
            'storage.backend = "milvus" needs the pymilvus client, which is not installed: '
            f'{INSTALL_HINT} (or set storage.backend = "local")'
        ) from None


KEEPALIVE_OPTIONS = {
    "grpc.keepalive_time_ms": 300_000,
    "grpc.keepalive_permit_without_calls": False,
}


class MilvusConnections:
    """One client per database over one Milvus endpoint; thread-safe, closed together."""

    def __init__(self, options: MilvusOptions) -> None:
        self.options = options
        self.pymilvus = require_pymilvus()
        self._clients: dict[str, Any] = {}
        self._lock = threading.Lock()

    def client(self, database: str = "") -> Any:
        """A `pymilvus.MilvusClient` bound to `database` ("" = the server's default database)."""
        with self._lock:
            found = self._clients.get(database)
            if found is None:
                found = self._clients[database] = self._connect(database)
            return found

    def _connect(self, database: str) -> Any:
        # pymilvus pings every 10 s even without calls; a gRPC server with the default ping
        # policy (milvus-lite's) answers that with GOAWAY "too_many_pings" and the next call
        # fails UNAVAILABLE. Ping only during calls, and no more often than that policy allows.
        kwargs: dict[str, Any] = {"grpc_options": KEEPALIVE_OPTIONS}
        if self.options.tls_ca_file:
            kwargs.update(secure=True, server_pem_path=self.options.tls_ca_file)
        return self.pymilvus.MilvusClient(
            uri=self.options.uri, token=self.options.token, db_name=database, **kwargs
        )

    def ensure_database(self, database: str) -> None:
        """Create `database` unless it exists."""
        admin = self.client()
        if database in admin.list_databases():
            return
        try:
            admin.create_database(database)
        except Exception:
            if database not in admin.list_databases():  # not another replica's create
                raise

    def close(self) -> None:
        """Close every client."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
