"""Health goes SERVING only after loading; reflection lists the services."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.conftest import make_settings
from tests.server_harness import ServerThread

SERVICES = ["groundwire.v1.IndexService", "groundwire.v1.RetrievalService"]


def _health(channel: grpc.Channel, service: str = "") -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    return stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status


def test_not_serving_until_loaded_then_serving(tmp_path: Path) -> None:
    server = ServerThread(make_settings(tmp_path, seed_demo=False)).start(load=False)
    try:
        with grpc.insecure_channel(server.target) as channel:
            for service in ["", *SERVICES]:
                assert _health(channel, service) == health_pb2.HealthCheckResponse.NOT_SERVING
            with pytest.raises(grpc.RpcError) as info:
                rs_grpc.RetrievalServiceStub(channel).Retrieve(
                    rs.RetrieveRequest(query="x"), timeout=10
                )
            assert info.value.code() is grpc.StatusCode.UNAVAILABLE
            assert (
                info.value.details() == "the server is still loading its indexes; retry in a moment"
            )
            # maintenance waits too: start-up clears what interrupted snapshots left behind
            with pytest.raises(grpc.RpcError) as info:
                ix_grpc.IndexServiceStub(channel).ListSnapshots(
                    ix.ListSnapshotsRequest(collection="default"), timeout=10
                )
            assert info.value.code() is grpc.StatusCode.UNAVAILABLE
            server.load()
            for service in ["", *SERVICES]:
                assert _health(channel, service) == health_pb2.HealthCheckResponse.SERVING
    finally:
        server.stop()


def test_reflection_lists_the_services(channel: grpc.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    responses = list(stub.ServerReflectionInfo(iter([request]), timeout=10))
    names = {s.name for s in responses[0].list_services_response.service}
    assert set(SERVICES) <= names
    assert "grpc.health.v1.Health" in names


def test_reflection_describes_the_retrieve_method(channel: grpc.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(
        file_containing_symbol="groundwire.v1.RetrievalService"
    )
    responses = list(stub.ServerReflectionInfo(iter([request]), timeout=10))
    files = responses[0].file_descriptor_response.file_descriptor_proto
    assert files, "reflection returned no descriptor"
