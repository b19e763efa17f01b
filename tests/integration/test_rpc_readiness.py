"""Every RPC of the proto is served, and each one needing a loaded server says so at the edge."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor

from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import retrieval_service_pb2 as rs
from server.rpc_declaration import implementations
from server.runtime import Runtime
from server.servicers import servicers
from tests.conftest import make_settings
from tests.server_harness import ServerThread

SERVICES = (
    rs.DESCRIPTOR.services_by_name["RetrievalService"],
    ix.DESCRIPTOR.services_by_name["IndexService"],
)
METHODS = [method for service in SERVICES for method in service.methods]
NEEDS_LOADED = {
    # every RPC uses the model, the indexes or the opened collections
    "Retrieve",
    "Answer",
    "ClearCache",
    "UpsertDocuments",
    "DeleteDocuments",
    "GetDocument",
    "CreateCollection",
    "DropCollection",
    "ListCollections",
    "Stats",
    "CompactCollection",
    "SnapshotCollection",
    "ListSnapshots",
    "RestoreCollection",
    "DeleteSnapshot",
    "AddMemories",
    "TuneCollection",
}
LOADING = "the server is still loading its indexes; retry in a moment"


def _call(channel: grpc.Channel, method: MethodDescriptor) -> tuple[grpc.StatusCode, str]:
    """Call `method` with a default request, the way its streaming kind requires."""
    path = f"/{method.containing_service.full_name}/{method.name}"
    request = message_factory.GetMessageClass(method.input_type)()
    response = message_factory.GetMessageClass(method.output_type)
    serialize, parse = request.SerializeToString, response.FromString
    try:
        if method.client_streaming:
            channel.stream_unary(path, serialize, parse)(iter([request]), timeout=60)
        elif method.server_streaming:
            list(channel.unary_stream(path, serialize, parse)(request, timeout=60))
        else:
            channel.unary_unary(path, serialize, parse)(request, timeout=60)
    except grpc.RpcError as error:
        return error.code(), error.details()
    return grpc.StatusCode.OK, ""


def test_each_rpc_declares_its_readiness(tmp_path: Path) -> None:
    runtime = Runtime(make_settings(tmp_path, seed_demo=False))
    try:
        declared = implementations([s for group in servicers(runtime).values() for s in group])
    finally:
        runtime.close()
    assert sorted(declared) == sorted(m.name for m in METHODS)
    assert {name for name, impl in declared.items() if impl.policy.needs_loaded} == NEEDS_LOADED


@pytest.fixture(scope="module")
def loading_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    server = ServerThread(make_settings(tmp_path_factory.mktemp("loading"), seed_demo=False))
    server.start(load=False)
    yield server
    server.stop()


@pytest.mark.parametrize("method", METHODS, ids=[m.name for m in METHODS])
def test_a_loading_server_refuses_exactly_the_rpcs_that_need_loading(
    loading_server: ServerThread, method: MethodDescriptor
) -> None:
    with grpc.insecure_channel(loading_server.target) as channel:
        code, details = _call(channel, method)
    if method.name in NEEDS_LOADED:
        assert (code, details) == (grpc.StatusCode.UNAVAILABLE, LOADING)
    else:
        assert code is not grpc.StatusCode.UNAVAILABLE


def test_a_loaded_server_serves_every_rpc_of_the_proto(loading_server: ServerThread) -> None:
    loading_server.load()
    with grpc.insecure_channel(loading_server.target) as channel:
        codes = {method.name: _call(channel, method)[0] for method in METHODS}
    unserved = {
        name: code
        for name, code in codes.items()
        if code
        in (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.INTERNAL)
    }
    assert not unserved
