"""A milvus-lite gRPC server in a subprocess on a loopback port, for tests of the Milvus backend.

milvus-lite 3.x ships a real Milvus gRPC endpoint (`milvus-lite server`), so the tests talk to
it over TCP exactly as groundwire talks to a Milvus cluster, and several groundwire processes
can share it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.free_port import free_port

START_TIMEOUT_S = 60.0


@contextmanager
def milvus_lite_server(data_dir: Path) -> Iterator[str]:
    """Run `milvus-lite server` on a free port until the block ends; yields its URI."""
    port = free_port()
    log = (data_dir.parent / f"{data_dir.name}.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "milvus_lite",
            "server",
            "--data-dir",
            str(data_dir),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],  # fmt: skip
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    uri = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(process, port)
        yield uri
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_until_serving(process: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"milvus-lite server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"milvus-lite server did not listen on port {port} in {START_TIMEOUT_S} s")
