"""Rounds of "ingest, kill -9 at a random moment, restart, check" against a real server process."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

import grpc

from core.store.integrity import check_store_file
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from tests.crash_workload import (
    COLLECTION,
    Ledger,
    RoundCheck,
    check_after_restart,
    ingest_until_killed,
)
from tests.serve_subprocess import ServeSubprocess
from tests.store_agreement import (
    STORE_FILE,
    DiskAgreement,
    find_collection_dir,
    read_disk_agreement,
)

KILL_AFTER_S = (0.0, 1.0)
"""The kill comes this long (uniformly random) after the round's first acknowledged upsert, so
every round has acknowledged documents however slow the machine is, and lands at any point of
the later calls: parsing, embedding, a SQLite commit, an index update or the reply."""
FIRST_ACK_TIMEOUT_S = 120


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One round: how long the writer ran, what it got acknowledged, the restart, the check."""

    round_no: int
    killed_after_s: float
    """From the writer's start to the SIGKILL."""
    acknowledged: int
    restart_s: float
    check: RoundCheck


class CrashRounds:
    """A server under `work_dir/data`, restarted after every kill; use as a context manager."""

    def __init__(self, work_dir: Path, seed: int) -> None:
        self.work_dir = work_dir
        self.data_dir = work_dir / "data"
        self.ledger = Ledger()
        self.first_start_s = 0.0
        self._rng = random.Random(seed)
        self._server: ServeSubprocess | None = None
        self._seen_sequence = 0

    def __enter__(self) -> CrashRounds:
        self._server = ServeSubprocess.start(self.data_dir, self.work_dir / "boot.log")
        self.first_start_s = self._server.startup_s
        with grpc.insecure_channel(self._server.target) as channel:
            ix_grpc.IndexServiceStub(channel).CreateCollection(
                ix.CreateCollectionRequest(name=COLLECTION), timeout=30
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.kill_9()  # no-op when finish() already stopped it

    def run_round(self, round_no: int) -> RoundResult:
        """Stream upserts, SIGKILL the server at a random moment, restart it and check."""
        server = self._require_server()
        acknowledged_before = len(self.ledger.acknowledged)
        attempted_before = len(self.ledger.attempted)
        stop = threading.Event()
        writer = threading.Thread(
            target=ingest_until_killed,
            args=(server.target, round_no, self.ledger, stop, self._rng.getrandbits(32)),
            name=f"crash-writer-{round_no}",
        )
        started = time.monotonic()
        writer.start()
        deadline = started + FIRST_ACK_TIMEOUT_S
        while (
            len(self.ledger.acknowledged) == acknowledged_before
            and writer.is_alive()
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        time.sleep(self._rng.uniform(*KILL_AFTER_S))
        server.kill_9()
        killed_after = time.monotonic() - started
        stop.set()
        writer.join(timeout=60)
        if writer.is_alive():
            raise RuntimeError(f"round {round_no}: the writer did not stop after the kill")
        self._server = server = ServeSubprocess.start(
            self.data_dir, self.work_dir / f"round{round_no}.log"
        )
        fresh = self.ledger.attempted[attempted_before:]
        check = check_after_restart(server.target, self.ledger, fresh, self._rng)
        check = replace(check, store_problems=tuple(self._store_problems(server.target)))
        acknowledged = len(self.ledger.acknowledged) - acknowledged_before
        return RoundResult(round_no, killed_after, acknowledged, server.startup_s, check)

    def _store_problems(self, target: str) -> list[str]:
        """Integrity of the store file (read while the server runs) and a sequence that never
        goes back: not below any acknowledged upsert's, nor below the last restart's."""
        directory = find_collection_dir(self.data_dir, COLLECTION)
        found = check_store_file(directory / STORE_FILE)
        with grpc.insecure_channel(target) as channel:
            stats = ix_grpc.IndexServiceStub(channel).Stats(
                ix.StatsRequest(collection=COLLECTION), timeout=60
            )
        floor = max(self._seen_sequence, self.ledger.acknowledged_sequence)
        if stats.sequence < floor:
            found.append(f"store sequence {stats.sequence} is behind {floor} seen before")
        self._seen_sequence = max(self._seen_sequence, stats.sequence)
        return found

    def finish(self) -> tuple[int, DiskAgreement]:
        """Stop the server gracefully; return its exit status and the on-disk agreement."""
        code = self._require_server().stop()
        directory = find_collection_dir(self.data_dir, COLLECTION)
        return code, read_disk_agreement(directory)

    def _require_server(self) -> ServeSubprocess:
        if self._server is None:
            raise RuntimeError("use CrashRounds as a context manager")
        return self._server
