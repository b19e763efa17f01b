"""`groundwire serve --port 0` as a child process: start it, wait for SERVING, kill -9 or stop it.

Shared by the crash-safety test, the crash-rounds benchmark and the ingestion benchmark, which all
need the real server binary (its own process, its own start-up path), not a server thread.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

LISTENING = re.compile(r"groundwire listening on [\d.]+:(\d+)")
SERVER_ENV = {
    "GROUNDWIRE_MODEL__DEVICE": "cpu",
    "GROUNDWIRE_STORAGE__SEED_DEMO_CORPUS": "false",
    "GROUNDWIRE_SERVER__PROCESSES": "1",  # one process unless a test asks for more
}


class ServeSubprocess:
    """One `groundwire serve` child; its stdout and stderr go to `log`."""

    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process = process
        self.log = log
        self.target = ""
        self.startup_s = 0.0
        """Seconds from spawning the process to the health service answering SERVING."""

    @classmethod
    def start(
        cls,
        data_dir: Path,
        log: Path,
        env: Mapping[str, str] | None = None,
        timeout_s: float = 180,
        credentials: grpc.ChannelCredentials | None = None,
        cwd: Path | None = None,
    ) -> ServeSubprocess:
        """Spawn the server on a free port and return once it is SERVING (or raise, leaving no child).

        `credentials`: the TLS credentials the health check needs when the server uses TLS.
        `cwd`: its working directory (default ours); `python -m server` imports the `server` and
        `core` found there before any on PYTHONPATH.
        """
        started = time.monotonic()
        with log.open("w") as handle:
            process = subprocess.Popen(
                [sys.executable, "-m", "server", "serve", "--port", "0"]
                + ["--data-dir", str(data_dir)],
                stdout=handle,
                stderr=subprocess.STDOUT,
                env={**os.environ, **SERVER_ENV, **(env or {})},
                cwd=cwd,
            )
        server = cls(process, log)
        try:
            server.target = server._wait_serving(started + timeout_s, credentials)
        except BaseException:
            server.kill_9()
            raise
        server.startup_s = time.monotonic() - started
        return server

    def log_text(self) -> str:
        """Everything the server printed so far."""
        return self.log.read_text(errors="replace")

    def kill_9(self) -> None:
        """SIGKILL the server (no shutdown code runs) and reap it."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=60)

    def stop(self, timeout_s: float = 120) -> int:
        """SIGTERM (graceful shutdown) and wait; returns the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill_9()
            raise

    def _wait_serving(
        self, deadline: float, credentials: grpc.ChannelCredentials | None = None
    ) -> str:
        while not (match := LISTENING.search(self.log_text())):
            self._assert_alive(deadline)
            time.sleep(0.05)
        target = f"127.0.0.1:{match.group(1)}"
        channel = (
            grpc.insecure_channel(target)
            if credentials is None
            else grpc.secure_channel(target, credentials)
        )
        with channel:
            health = health_pb2_grpc.HealthStub(channel)
            while True:
                try:
                    reply = health.Check(health_pb2.HealthCheckRequest(), timeout=2)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return target
                except grpc.RpcError:
                    pass
                self._assert_alive(deadline)
                time.sleep(0.05)

    def _assert_alive(self, deadline: float) -> None:
        if self.process.poll() is not None:
            raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.log_text()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"server not SERVING in time:\n{self.log_text()}")
