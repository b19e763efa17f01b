"""`serve --processes 2` with TLS and with mutual TLS: every process serves the shared port with
the configured certificates, answers Retrieve itself, and a write sent to a reader is forwarded
to the primary (over its private socket) and served at once by both. Plaintext callers, and
under mutual TLS callers without a client certificate, are refused by every process.

Certificates come from openssl for the test (tests/pki.py); each channel is its own connection
and tests/serving_process.py tells which process serves it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.pki import HAS_OPENSSL, make_pki
from tests.serve_subprocess import ServeSubprocess
from tests.serving_process import on_reader

pytestmark = pytest.mark.skipif(not HAS_OPENSSL, reason="needs the openssl CLI")

CHANNELS = 12
COLLECTION = "notes"


@dataclasses.dataclass
class TlsCluster:
    server: ServeSubprocess
    pki: Path
    mutual: bool
    channels: list[grpc.Channel]
    on_reader: list[bool]

    def credentials(self, client_cert: bool) -> grpc.ChannelCredentials:
        return _credentials(self.pki, client_cert)

    def connect(self, credentials: grpc.ChannelCredentials | None) -> grpc.Channel:
        """A new channel with its own connection (a local subchannel pool); None: plaintext."""
        options = [("grpc.use_local_subchannel_pool", 1)]
        if credentials is None:
            return grpc.insecure_channel(self.server.target, options=options)
        return grpc.secure_channel(self.server.target, credentials, options=options)


def _credentials(pki: Path, client_cert: bool) -> grpc.ChannelCredentials:
    return grpc.ssl_channel_credentials(
        root_certificates=(pki / "ca.crt").read_bytes(),
        private_key=(pki / "client.key").read_bytes() if client_cert else None,
        certificate_chain=(pki / "client.crt").read_bytes() if client_cert else None,
    )


def _upsert(channel: grpc.Channel, document_id: str, text: str) -> None:
    document = common.Document(document_id=document_id, text=text)
    request = ix.UpsertDocumentsRequest(collection=COLLECTION, documents=[document])
    reply = ix_grpc.IndexServiceStub(channel).UpsertDocuments(iter([request]), timeout=120)
    assert reply.upserted == 1, reply


def _documents(channel: grpc.Channel, query: str) -> list[str]:
    request = rs.RetrieveRequest(query=query, collection=COLLECTION, top_k=5)
    reply = rs_grpc.RetrievalServiceStub(channel).Retrieve(request, timeout=60)
    return [hit.chunk.document_id for hit in reply.hits]


@pytest.fixture(scope="module", params=[False, True], ids=["tls", "mutual-tls"])
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TlsCluster]:
    mutual: bool = request.param
    directory = tmp_path_factory.mktemp("processes-tls")
    pki = make_pki(directory)
    env = {
        "GROUNDWIRE_SERVER__PROCESSES": "2",
        "GROUNDWIRE_SERVER__TLS_CERT_FILE": str(pki / "server.crt"),
        "GROUNDWIRE_SERVER__TLS_KEY_FILE": str(pki / "server.key"),
    }
    if mutual:
        env["GROUNDWIRE_SERVER__TLS_CLIENT_CA_FILE"] = str(pki / "ca.crt")
    server = ServeSubprocess.start(
        directory / "data",
        directory / "server.log",
        env=env,
        credentials=_credentials(pki, client_cert=mutual),
    )
    cluster = TlsCluster(server, pki, mutual, [], [])
    try:
        cluster.channels = [
            cluster.connect(cluster.credentials(client_cert=mutual)) for _ in range(CHANNELS)
        ]
        ix_grpc.IndexServiceStub(cluster.channels[0]).CreateCollection(
            ix.CreateCollectionRequest(name=COLLECTION)
        )
        _upsert(cluster.channels[0], "intro", "Groundwire serves retrieval over gRPC.")
        cluster.on_reader = on_reader(cluster.channels, COLLECTION)
        yield cluster
    finally:
        for channel in cluster.channels:
            channel.close()
        cluster.server.stop()


def test_both_processes_serve_retrieve_over_tls(cluster: TlsCluster) -> None:
    log = cluster.server.log_text()[-4000:]  # shown on failure: readers restarted, refusals
    assert any(cluster.on_reader) and not all(cluster.on_reader), (cluster.on_reader, log)
    found = [_documents(channel, "retrieval over gRPC") for channel in cluster.channels]
    assert found == [["intro"]] * CHANNELS, (found, log)


def test_a_write_sent_to_a_reader_is_forwarded_and_served_by_both(cluster: TlsCluster) -> None:
    reader = cluster.channels[cluster.on_reader.index(True)]
    _upsert(reader, "heron", "The grey heron fishes at dawn.")
    for channel in cluster.channels:
        assert _documents(channel, "grey heron")[0] == "heron"


def _refused(channel: grpc.Channel) -> grpc.StatusCode:
    with channel:
        try:
            _documents(channel, "retrieval over gRPC")
        except grpc.RpcError as error:
            return error.code()
    return grpc.StatusCode.OK


def test_every_process_refuses_callers_without_the_required_credentials(
    cluster: TlsCluster,
) -> None:
    # as many connections as the served ones reach both processes
    plaintext = [_refused(cluster.connect(None)) for _ in range(CHANNELS)]
    assert set(plaintext) == {grpc.StatusCode.UNAVAILABLE}
    if cluster.mutual:
        no_certificate = cluster.credentials(client_cert=False)
        refused = [_refused(cluster.connect(no_certificate)) for _ in range(CHANNELS)]
        assert set(refused) == {grpc.StatusCode.UNAVAILABLE}
