"""Session fixtures: a real server over the bundled demo corpus and channels to it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.settings import ModelSettings, ServerSettings, Settings, StorageSettings
from tests.server_harness import ServerThread


def make_settings(data_dir: Path, seed_demo: bool = True) -> Settings:
    """Test settings: loopback, port 0, CPU, data under `data_dir`."""
    return Settings(
        server=ServerSettings(host="127.0.0.1", port=0, shutdown_grace_s=1.0, worker_threads=4),
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
