"""TLS and mutual TLS through a real server, with certificates made by openssl for the test."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from server.settings import ServerSettings
from tests.conftest import make_settings
from tests.pki import HAS_OPENSSL, make_pki
from tests.server_harness import ServerThread

pytestmark = pytest.mark.skipif(not HAS_OPENSSL, reason="needs the openssl CLI")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _server(tmp: Path, pki: Path, mutual: bool) -> ServerThread:
    base = make_settings(tmp, seed_demo=False)
    server = dataclasses.replace(
        base.server,
        host="127.0.0.1",
        tls_cert_file=str(pki / "server.crt"),
        tls_key_file=str(pki / "server.key"),
        tls_client_ca_file=str(pki / "ca.crt") if mutual else "",
    )
    assert isinstance(server, ServerSettings)
    return ServerThread(dataclasses.replace(base, server=server)).start()


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory, pki: Path) -> Iterator[ServerThread]:
    server = _server(tmp_path_factory.mktemp("tls"), pki, mutual=False)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def mtls_server(tmp_path_factory: pytest.TempPathFactory, pki: Path) -> Iterator[ServerThread]:
    server = _server(tmp_path_factory.mktemp("mtls"), pki, mutual=True)
    yield server
    server.stop()


def _list(channel: grpc.Channel) -> grpc.StatusCode:
    try:
        ix_grpc.IndexServiceStub(channel).ListCollections(ix.ListCollectionsRequest(), timeout=10)
    except grpc.RpcError as error:
        return error.code()
    return grpc.StatusCode.OK


def _credentials(pki: Path, client_cert: bool) -> grpc.ChannelCredentials:
    return grpc.ssl_channel_credentials(
        root_certificates=(pki / "ca.crt").read_bytes(),
        private_key=(pki / "client.key").read_bytes() if client_cert else None,
        certificate_chain=(pki / "client.crt").read_bytes() if client_cert else None,
    )


def test_tls_server_serves_verified_clients_and_refuses_plaintext(
    tls_server: ServerThread, pki: Path
) -> None:
    target = f"localhost:{tls_server.port}"
    with grpc.secure_channel(target, _credentials(pki, client_cert=False)) as channel:
        assert _list(channel) is grpc.StatusCode.OK
    with grpc.insecure_channel(target) as channel:
        assert _list(channel) is grpc.StatusCode.UNAVAILABLE


def test_mutual_tls_requires_a_client_certificate_from_the_ca(
    mtls_server: ServerThread, pki: Path
) -> None:
    target = f"localhost:{mtls_server.port}"
    with grpc.secure_channel(target, _credentials(pki, client_cert=True)) as channel:
        assert _list(channel) is grpc.StatusCode.OK
    with grpc.secure_channel(target, _credentials(pki, client_cert=False)) as channel:
        assert _list(channel) is grpc.StatusCode.UNAVAILABLE
