"""Real groundwire servers (`groundwire serve` subprocesses on free loopback ports) for the clients.

`keyed_server` requires an API key; `tls_server` requires mutual TLS and its generator is an
OpenAI-compatible endpoint that accepts the connection and never answers, so an Answer stream
stays open after its first event until the client cancels it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from groundwire import AsyncClient, Client
from server.api_keys import hash_key, new_key
from tests.fake_upstream import SilentUpstream, TcpProxy
from tests.pki import make_pki
from tests.serve_subprocess import ServeSubprocess

TENANT = "clients"
SLOW_COLLECTION = "tides"
"""A collection of the TLS server with one document; its answers never finish."""


@dataclass(frozen=True)
class KeyedServer:
    """A server requiring API keys, and a writer key for it."""

    server: ServeSubprocess
    api_key: str

    @property
    def target(self) -> str:
        return self.server.target


@dataclass(frozen=True)
class TlsServer:
    """A mutual-TLS server, its PKI, and the proxy in front of its silent generator."""

    server: ServeSubprocess
    pki: Path
    generator_proxy: TcpProxy

    @property
    def target(self) -> str:
        return self.server.target

    def client(self, **options: Any) -> Client:
        """A client with the CA and the client certificate."""
        return Client(
            self.target,
            ca_file=self.pki / "ca.crt",
            cert_file=self.pki / "client.crt",
            key_file=self.pki / "client.key",
            **options,
        )

    def async_client(self, **options: Any) -> AsyncClient:
        """An asyncio client with the CA and the client certificate."""
        return AsyncClient(
            self.target,
            ca_file=self.pki / "ca.crt",
            cert_file=self.pki / "client.crt",
            key_file=self.pki / "client.key",
            **options,
        )


@pytest.fixture(scope="package")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    directory = tmp_path_factory.mktemp("keyed")
    key = new_key()
    keys_file = directory / "keys.toml"
    keys_file.write_text(
        f'[[keys]]\nid = "client-tests"\ntenant = "{TENANT}"\nrole = "admin"\n'
        f'sha256 = "{hash_key(key)}"\n',
        "utf-8",
    )
    server = ServeSubprocess.start(
        directory / "data",
        directory / "serve.log",
        env={"GROUNDWIRE_AUTH__KEYS_FILE": str(keys_file)},
    )
    yield KeyedServer(server, key)
    server.stop()


@pytest.fixture(scope="package")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsServer]:
    directory = tmp_path_factory.mktemp("tls")
    pki = make_pki(directory)
    silent = SilentUpstream()
    proxy = TcpProxy(int(silent.base_url.rsplit(":", 1)[1].split("/")[0]))
    credentials = grpc.ssl_channel_credentials(
        root_certificates=(pki / "ca.crt").read_bytes(),
        private_key=(pki / "client.key").read_bytes(),
        certificate_chain=(pki / "client.crt").read_bytes(),
    )
    server = ServeSubprocess.start(
        directory / "data",
        directory / "serve.log",
        env={
            "GROUNDWIRE_SERVER__TLS_CERT_FILE": str(pki / "server.crt"),
            "GROUNDWIRE_SERVER__TLS_KEY_FILE": str(pki / "server.key"),
            "GROUNDWIRE_SERVER__TLS_CLIENT_CA_FILE": str(pki / "ca.crt"),
            "GROUNDWIRE_GENERATOR__BASE_URL": proxy.base_url,
            "GROUNDWIRE_GENERATOR__MODEL": "never-answers",
        },
        credentials=credentials,
    )
    tls = TlsServer(server, pki, proxy)
    with tls.client() as client:
        client.create_collection(SLOW_COLLECTION)
        client.upsert_documents(
            [{"document_id": "tide.md", "text": "# Tides\n\nTides follow the moon.\n"}],
            collection=SLOW_COLLECTION,
        )
    yield tls
    server.stop()
    proxy.close()
    silent.close()
