"""A changed keys file takes effect without a restart: on change (polled) and on SIGHUP."""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from server.api_keys import hash_key, new_key
from server.settings import AuthSettings
from tests.conftest import make_settings
from tests.serve_subprocess import ServeSubprocess
from tests.server_harness import ServerThread

WAIT_S = 60  # upper bound for a change to be noticed; never a threshold the test asserts on


def _entry(key_id: str, key: str, tenant: str = "acme") -> str:
    return f'[[keys]]\nid = "{key_id}"\ntenant = "{tenant}"\nrole = "reader"\nsha256 = "{hash_key(key)}"\n'


def _replace(path: Path, text: str) -> None:
    """Write the file in place, as an editor or `>>` would."""
    with path.open("w", encoding="utf-8") as handle:
        handle.write(text)


def _status(channel: grpc.Channel, key: str) -> grpc.StatusCode:
    stub = ix_grpc.IndexServiceStub(channel)
    try:
        stub.ListCollections(
            ix.ListCollectionsRequest(), metadata=(("authorization", f"Bearer {key}"),), timeout=30
        )
    except grpc.RpcError as error:
        return error.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


def _eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {WAIT_S}s: {what}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def keys_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reload-keys") / "keys.toml"


KEPT, REMOVED, ADDED = new_key(), new_key(), new_key()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, keys_path: Path) -> Iterator[ServerThread]:
    keys_path.write_text(_entry("kept", KEPT) + _entry("removed", REMOVED), "utf-8")
    settings = dataclasses.replace(
        make_settings(tmp_path_factory.mktemp("reload-data"), seed_demo=False),
        auth=AuthSettings(keys_file=str(keys_path), keys_reload_interval_s=0.1),
    )
    running = ServerThread(settings).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def channel(server: ServerThread) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.target) as chan:
        yield chan


def test_a_removed_key_is_refused_and_an_added_key_works_without_restart(
    channel: grpc.Channel, keys_path: Path
) -> None:
    assert _status(channel, REMOVED) is grpc.StatusCode.OK
    assert _status(channel, ADDED) is grpc.StatusCode.UNAUTHENTICATED
    _replace(keys_path, _entry("kept", KEPT) + _entry("added", ADDED))
    _eventually(
        lambda: _status(channel, REMOVED) is grpc.StatusCode.UNAUTHENTICATED,
        "the removed key is refused",
    )
    assert _status(channel, ADDED) is grpc.StatusCode.OK
    assert _status(channel, KEPT) is grpc.StatusCode.OK


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('[[keys]\nid = "broken', "is not valid TOML"),
        (_entry("kept", "x").replace('"acme"', '"../Bad Tenant"'), "tenant '../Bad Tenant'"),
        ("", "has no [[keys]] entries"),
    ],
    ids=["bad-toml", "bad-tenant", "empty"],
)
def test_a_malformed_file_keeps_the_old_keys_and_logs_why(
    channel: grpc.Channel, keys_path: Path, caplog: pytest.LogCaptureFixture, text: str, reason: str
) -> None:
    _replace(keys_path, _entry("kept", KEPT) + _entry("added", ADDED))
    _eventually(lambda: _status(channel, ADDED) is grpc.StatusCode.OK, "the good file is loaded")
    with caplog.at_level(logging.INFO, logger="server.key_ring_file"):
        caplog.clear()
        _replace(keys_path, text)

        def failures() -> list[str]:
            return [
                r.message for r in caplog.records if "keys file not reloaded (changed)" in r.message
            ]

        # (a poll may also catch the file half-written: that is refused the same way)
        _eventually(lambda: any(reason in m for m in failures()), "the failed reload is logged")
        message = next(m for m in failures() if reason in m)
        assert str(keys_path) in message
        assert message.endswith(
            "Still accepting the 2 keys loaded before; fix the file and it is reloaded when it "
            "changes or on SIGHUP"
        )
        assert hash_key(KEPT) not in caplog.text and KEPT not in caplog.text
        assert _status(channel, KEPT) is grpc.StatusCode.OK
        assert _status(channel, ADDED) is grpc.StatusCode.OK
        # fixing the file is picked up again
        _replace(keys_path, _entry("kept", KEPT))
        _eventually(
            lambda: _status(channel, ADDED) is grpc.StatusCode.UNAUTHENTICATED,
            "the fixed file is loaded",
        )
        assert _status(channel, KEPT) is grpc.StatusCode.OK


def test_sighup_reloads_the_keys_file(tmp_path: Path) -> None:
    keys_path = tmp_path / "keys.toml"
    keys_path.write_text(_entry("kept", KEPT) + _entry("removed", REMOVED), "utf-8")
    server = ServeSubprocess.start(
        tmp_path / "data",
        tmp_path / "serve.log",
        env={
            "GROUNDWIRE_AUTH__KEYS_FILE": str(keys_path),
            # no polling within the test: only SIGHUP can make the change take effect
            "GROUNDWIRE_AUTH__KEYS_RELOAD_INTERVAL_S": "3600",
        },
    )
    try:
        with grpc.insecure_channel(server.target) as channel:
            assert _status(channel, REMOVED) is grpc.StatusCode.OK
            _replace(keys_path, _entry("kept", KEPT) + _entry("added", ADDED))
            assert _status(channel, REMOVED) is grpc.StatusCode.OK  # not polled: still in force
            os.kill(server.process.pid, signal.SIGHUP)
            _eventually(
                lambda: "API keys reloaded (SIGHUP)" in server.log_text(), "the SIGHUP reload"
            )
            assert _status(channel, REMOVED) is grpc.StatusCode.UNAUTHENTICATED
            assert _status(channel, ADDED) is grpc.StatusCode.OK
            assert _status(channel, KEPT) is grpc.StatusCode.OK
            assert "added ids ['added'], removed ids ['removed']" in server.log_text()
            _replace(keys_path, "[[keys]]\nnot toml at all")
            os.kill(server.process.pid, signal.SIGHUP)
            _eventually(
                lambda: "keys file not reloaded (SIGHUP)" in server.log_text(),
                "the failed SIGHUP reload",
            )
            assert _status(channel, ADDED) is grpc.StatusCode.OK
        assert server.stop() == 0
    finally:
        server.kill_9()
    log = server.log_text()
    for key in (KEPT, REMOVED, ADDED):
        assert key not in log and hash_key(key) not in log
