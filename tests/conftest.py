"""Session fixtures: a real server over the bundled demo corpus and channels to it."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from core.catalog.storage_backend import LocalBackend, StorageBackend
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.settings import (
    ModelSettings,
    ServerSettings,
    Settings,
    StorageBackendKind,
    StorageSettings,
)
from tests.milvus_lite_server import milvus_lite_server
from tests.server_harness import ServerThread

BACKENDS = ["local", "milvus"]
"""Storage backends the contract tests run against (`storage_backend`, `backend_storage`)."""


def make_settings(data_dir: Path, seed_demo: bool = True) -> Settings:
    """Test settings: loopback, port 0, CPU, data under `data_dir`."""
    return Settings(
        server=ServerSettings(
            host="127.0.0.1", port=0, shutdown_grace_s=1.0, worker_threads=4, processes=1
        ),
        model=ModelSettings(device="cpu"),
        storage=StorageSettings(data_dir=str(data_dir), seed_demo_corpus=seed_demo),
    )


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """One server for the session, the demo corpus indexed into the default collection."""
    server = ServerThread(make_settings(tmp_path_factory.mktemp("gw-data"))).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def channel(live_server: ServerThread) -> Iterator[grpc.Channel]:
    """A real channel to the session server."""
    with grpc.insecure_channel(live_server.target) as chan:
        grpc.channel_ready_future(chan).result(timeout=30)
        yield chan


@pytest.fixture(scope="session")
def retrieval(channel: grpc.Channel) -> rs_grpc.RetrievalServiceStub:
    """RetrievalService stub."""
    return rs_grpc.RetrievalServiceStub(channel)


@pytest.fixture(scope="session")
def index(channel: grpc.Channel) -> ix_grpc.IndexServiceStub:
    """IndexService stub."""
    return ix_grpc.IndexServiceStub(channel)


def replace_settings(settings: Settings, **changes: object) -> Settings:
    """dataclasses.replace for tests."""
    return dataclasses.replace(settings, **changes)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def milvus_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A milvus-lite server (a real Milvus gRPC endpoint) for the session, on a loopback port."""
    with milvus_lite_server(tmp_path_factory.mktemp("milvus-lite") / "data") as uri:
        yield uri


def fresh_milvus_database() -> str:
    """A database prefix no other test uses, so tests sharing the server never meet."""
    return f"t{uuid.uuid4().hex[:12]}"


def backend_factory(kind: str, request: pytest.FixtureRequest) -> Callable[[], StorageBackend]:
    """Makes storage backends of `kind` ("local", "milvus"); those made by one factory share
    their data (a Milvus factory has its own fresh database on the session's milvus-lite)."""
    if kind == "local":
        return LocalBackend
    from core.milvus.backend import MilvusBackend
    from core.milvus.options import MilvusOptions

    uri = request.getfixturevalue("milvus_uri")
    options = MilvusOptions(uri=uri, database=fresh_milvus_database())
    return lambda: MilvusBackend(options)


@pytest.fixture(params=BACKENDS)
def storage_backend(request: pytest.FixtureRequest) -> Callable[[], StorageBackend]:
    """Makes the storage backend under test; every backend made by one test shares its data."""
    return backend_factory(request.param, request)


def milvus_storage(
    data_dir: Path, uri: str, database: str, seed_demo: bool = True
) -> StorageSettings:
    """Storage settings of a server keeping its collections in Milvus at `uri`."""
    return StorageSettings(
        data_dir=str(data_dir),
        seed_demo_corpus=seed_demo,
        backend=StorageBackendKind.MILVUS,
        milvus_uri=uri,
        milvus_database=database,
    )
