"""The handler tables come from the proto descriptors: an RPC without an implementation stops
start-up instead of answering UNIMPLEMENTED."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import retrieval_service_pb2 as rs
from server.authentication import Authenticator
from server.handlers import service_handler
from server.index_servicer import IndexServicer
from server.principal import Role
from server.retrieval_servicer import RetrievalServicer
from server.rpc_declaration import rpc
from server.runtime import Runtime
from server.servicers import servicers
from tests.conftest import make_settings

INDEX = ix.DESCRIPTOR.services_by_name["IndexService"]
RETRIEVAL = rs.DESCRIPTOR.services_by_name["RetrievalService"]


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    built = Runtime(make_settings(tmp_path, seed_demo=False))
    yield built
    built.close()


class _Details(grpc.HandlerCallDetails):
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


def test_every_rpc_of_the_proto_has_a_handler(runtime: Runtime) -> None:
    tables = servicers(runtime)
    assert set(tables) == {RETRIEVAL, INDEX}
    for service, implementations in tables.items():
        handler = service_handler(
            service, implementations, Authenticator(None), runtime.require_ready
        )
        for method in service.methods:
            found = handler.service(_Details(f"/{service.full_name}/{method.name}"))  # type: ignore[attr-defined]
            assert found is not None, method.full_name
            assert found.request_streaming is method.client_streaming
            assert found.response_streaming is method.server_streaming


def test_a_missing_implementation_stops_start_up(runtime: Runtime) -> None:
    with pytest.raises(TypeError) as caught:
        service_handler(INDEX, [IndexServicer(runtime)], Authenticator(None), runtime.require_ready)
    assert str(caught.value) == (
        "groundwire.v1.IndexService: the proto's RPCs ['AddMemories', 'CompactCollection', "
        "'DeleteSnapshot', 'ListSnapshots', 'RestoreCollection', 'SnapshotCollection', "
        "'TuneCollection'] have no @rpc implementation and the implementations [] match no RPC of the proto; make them agree"
    )


class _Extra:
    @rpc("Rerank", Role.READER, needs_loaded=True)
    async def rerank(self, request: object, context: object) -> object:
        return request


class _WrongKind:
    @rpc("Answer", Role.READER, needs_loaded=True)
    async def answer(self, request: object, context: object) -> object:  # not a generator
        return request


def test_an_implementation_of_no_rpc_or_of_the_wrong_kind_stops_start_up(runtime: Runtime) -> None:
    servicer = RetrievalServicer(runtime)
    with pytest.raises(TypeError, match=r"the implementations \['Rerank'\] match no RPC"):
        service_handler(RETRIEVAL, [servicer, _Extra()], Authenticator(None), runtime.require_ready)
    with pytest.raises(ValueError, match="RPC Answer is implemented twice"):
        service_handler(
            RETRIEVAL, [servicer, _WrongKind()], Authenticator(None), runtime.require_ready
        )
    with pytest.raises(
        TypeError,
        match="groundwire.v1.RetrievalService.Answer is unary_stream: its implementation must be "
        "an async generator",
    ):
        service_handler(
            RETRIEVAL,
            [_WrongKind(), _Retrieve(), _ClearCache()],
            Authenticator(None),
            runtime.require_ready,
        )


class _Retrieve:
    @rpc("Retrieve", Role.READER, needs_loaded=True)
    async def retrieve(self, request: object, context: object) -> object:
        return request


class _ClearCache:
    @rpc("ClearCache", Role.WRITER, needs_loaded=True)
    async def clear_cache(self, request: object, context: object) -> object:
        return request
