"""The primary's reader processes: started, awaited until ready, restarted, stopped.

Readers are spawned (never forked: the primary holds gRPC, torch and onnxruntime state by then)
after the primary has loaded, so they open collections the primary already brought up to date.
A reader that exits unexpectedly is reaped and started again; more than `MAX_RESTARTS` restarts
within `RESTART_WINDOW_S` seconds stop the whole server instead of restarting forever, and so
does a reader that cannot be started again (spawning failed, or it exited before ready). Stopping
sends SIGTERM to every reader, waits for each (SIGKILL after the grace period) and reaps it, so
no child outlives the primary or stays a zombie.

A reader reports ("ready", pid, metrics port): its own metrics endpoint on loopback, which the
primary's endpoint scrapes (server/telemetry/process_metrics.py). After "ready", the link
carries the primary's requests (server/reader_link.py), each answered by the reader on the link
with the request's id:
- ClearCache (server/cache_clearing.py): ("clear_cache", id, tenant, collection) is answered
  ("cleared", id, retrieval entries, embedding entries);
- Stats (server/cache_counting.py): ("cache_stats", id, tenant, collection) is answered
  ("cache_stats", id, embedding hits, embedding misses, retrieval hits, retrieval misses,
  retrieval entries).
One request per reader is in flight at a time: the answer to one that timed out is read (and
dropped) before the next request is sent. A reader that is restarting, has exited or does not
answer in time gives no answer (ClearCache reports it; Stats leaves it out of its sums).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import itertools
import logging
import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from typing import Any

from server.cache_clearing import CacheClear, ClearRequest
from server.cache_counting import CacheCounts
from server.load_board import NOT_SERVING, LoadBoard
from server.process_role import ProcessKind, ProcessRole
from server.reader_link import NoAnswer, ReaderLink
from server.reader_process import run_reader
from server.settings import Settings

logger = logging.getLogger(__name__)

MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0
WATCH_INTERVAL_S = 0.2
KILL_AFTER_S = 5.0


RESTARTING = "restarting"
"""Why a reader not (yet) serving gave no answer."""


class ReaderStartError(RuntimeError):
    """A reader process failed to start (its reason is in the message and the log)."""


@dataclass(slots=True)
class _Reader:
    number: int
    process: BaseProcess
    link: ReaderLink
    ready: bool = False
    """Set once it reported ready: from then on the link carries the primary's requests."""
    metrics_port: int = 0
    """Its metrics endpoint on loopback, reported when ready (0: metrics off)."""


@dataclass(frozen=True, slots=True)
class _Answer:
    """One reader's answer to a request: its fields, or `error` saying why there is none."""

    number: int
    pid: int
    fields: tuple[Any, ...] = ()
    error: str | None = None


class ReaderSupervisor:
    """The readers of a server of `primary.processes` processes serving `settings` (its port
    already resolved) beside `primary`; a reader that died is marked not serving on `board`."""

    def __init__(self, settings: Settings, primary: ProcessRole, board: LoadBoard) -> None:
        # metrics.port belongs to the primary, which serves every process's series; each
        # reader's endpoint takes a free loopback port, reported when ready, for it to scrape
        metrics = dataclasses.replace(settings.metrics, host="127.0.0.1", port=0)
        self._settings = settings.replace(metrics=metrics)
        self._primary = primary
        self._board = board
        self._count = primary.processes - 1
        self._context = multiprocessing.get_context("spawn")
        self._readers: dict[int, _Reader] = {}
        self._restarts: collections.deque[float] = collections.deque()
        self._stopping = False
        self._request_ids = itertools.count(1)

    @property
    def pids(self) -> dict[int, int]:
        """Reader number -> process id, of the readers running now."""
        return {n: r.process.pid for n, r in self._readers.items() if r.process.pid is not None}

    def metrics_ports(self) -> dict[int, int | None]:
        """Reader number -> its loopback metrics port, None while it is not serving (starting
        or restarting); none once stopping. Called by the metrics endpoint's thread, so it only
        reads (no waitpid: a reader that just died is refused until the watcher reaps it)."""
        if self._stopping:
            return {}
        ports: dict[int, int | None] = {}
        for number in range(1, self._count + 1):
            reader = self._readers.get(number)
            ready = reader is not None and reader.ready
            ports[number] = reader.metrics_port if ready and reader is not None else None
        return ports

    def send_signal(self, sig: int) -> None:
        """Send `sig` to every running reader (SIGHUP: reload the keys file)."""
        for reader in self._readers.values():
            if reader.process.pid is not None and reader.process.is_alive():
                os.kill(reader.process.pid, sig)

    async def clear_caches(self, request: ClearRequest, timeout_s: float) -> list[CacheClear]:
        """Ask every reader to clear its caches; one entry per reader (by number), each within
        `timeout_s`: a reader that is restarting, exited or does not answer in time is reported
        as not cleared, saying which."""
        asked = ("clear_cache", request.tenant, request.collection)
        answers = await self._ask_all(asked, "cleared", timeout_s, "clearing")
        return [
            CacheClear(a.number, a.pid, True, *a.fields)
            if a.error is None
            else CacheClear(a.number, a.pid, False, error=_clear_error(a.error))
            for a in answers
        ]

    async def count_caches(
        self, tenant: str, collection: str, timeout_s: float
    ) -> list[CacheCounts]:
        """Every reader's cache counters (the retrieval ones for `collection`), each within
        `timeout_s`: a reader that is restarting, exited or does not answer in time is left out
        (with a warning naming it)."""
        asked = ("cache_stats", tenant, collection)
        answers = await self._ask_all(asked, "cache_stats", timeout_s, "counting")
        for a in answers:
            if a.error is not None:
                logger.warning(
                    "Stats: reader process %d (pid %d) left out of the cache counters: %s",
                    a.number,
                    a.pid,
                    a.error,
                )
        return [CacheCounts(*a.fields) for a in answers if a.error is None]

    async def _ask_all(
        self, asked: tuple[Any, ...], answer_kind: str, timeout_s: float, doing: str
    ) -> list[_Answer]:
        """`asked` (kind, fields...) sent to every reader: their answers, by reader number."""
        return list(
            await asyncio.gather(
                *(
                    self._ask(number, asked, answer_kind, timeout_s, doing)
                    for number in range(1, self._count + 1)
                )
            )
        )

    async def _ask(
        self, number: int, asked: tuple[Any, ...], answer_kind: str, timeout_s: float, doing: str
    ) -> _Answer:
        reader = self._readers.get(number)
        if self._stopping:
            return _Answer(number, 0, error="the server is stopping")
        if reader is None or not reader.ready or not reader.process.is_alive():
            starting = reader is not None and reader.process.is_alive()
            pid = (reader.process.pid or 0) if reader is not None and starting else 0
            return _Answer(number, pid, error=RESTARTING)
        pid = reader.process.pid or 0
        request = (asked[0], next(self._request_ids), *asked[1:])
        try:
            fields = await reader.link.ask(request, answer_kind, timeout_s, doing)
        except NoAnswer as exc:
            return _Answer(number, pid, error=str(exc))
        return _Answer(number, pid, fields)

    async def start(self, device: str) -> None:
        """Start every reader and wait until all serve; ReaderStartError (after stopping the
        others) when one fails.

        `device` is the embedding device the primary chose for `model.device`; the readers take
        it as theirs (on one host "auto" chooses the same), so none imports torch to look for
        CUDA: a reader on a CPU host never loads torch (core/embed/device.py).
        """
        model = dataclasses.replace(self._settings.model, device=device)
        self._settings = self._settings.replace(model=model)
        results = await asyncio.gather(
            *(self._start(number) for number in range(1, self._count + 1)),
            return_exceptions=True,
        )
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            await self.stop(grace_s=1.0)
            raise ReaderStartError(str(failures[0]))

    async def watch(self, give_up: Callable[[str], None]) -> None:
        """Restart readers that exit, until `stop`; `give_up(reason)` when they keep dying."""
        while not self._stopping:
            await asyncio.sleep(WATCH_INTERVAL_S)
            for number, reader in list(self._readers.items()):
                if self._stopping or reader.process.is_alive():
                    continue
                reader.process.join()  # reap it
                reader.link.close()  # a request still waiting on it ends: "exited"
                del self._readers[number]
                self._board.set(number, NOT_SERVING)  # the others stop handing it reads
                logger.warning(
                    "reader process %d (pid %s) exited with %s; starting it again",
                    number,
                    reader.process.pid,
                    reader.process.exitcode,
                )
                if not self._may_restart():
                    give_up(
                        f"reader processes exited {MAX_RESTARTS + 1} times within "
                        f"{RESTART_WINDOW_S:.0f} s; see the log above"
                    )
                    return
                try:
                    await self._start(number)
                except Exception as exc:  # noqa: BLE001 - a watcher that died would restart none
                    if not self._stopping:  # stopped while it started: no failure
                        if not isinstance(exc, ReaderStartError):
                            logger.exception("restarting reader process %d failed", number)
                        give_up(str(exc))
                    return

    async def stop(self, grace_s: float) -> None:
        """SIGTERM every reader, wait up to `grace_s` + KILL_AFTER_S, SIGKILL the rest; reap all."""
        self._stopping = True
        readers = list(self._readers.values())
        self._readers.clear()
        for reader in readers:
            if reader.process.is_alive():
                reader.process.terminate()
        loop = asyncio.get_running_loop()
        await asyncio.gather(
            *(
                loop.run_in_executor(None, _reap, reader, grace_s + KILL_AFTER_S)
                for reader in readers
            )
        )
        for reader in readers:  # a reader still starting: its `_start` ends
            reader.link.close()

    async def _start(self, number: int) -> None:
        role = dataclasses.replace(self._primary, kind=ProcessKind.READER, number=number)
        try:
            ours, theirs = self._context.Pipe()
        except OSError as exc:  # EMFILE: out of file descriptors
            raise _not_started(number, exc) from exc
        process = self._context.Process(
            target=run_reader,
            args=(self._settings, role, theirs),
            name=f"groundwire-reader-{number}",
            daemon=False,
        )
        try:
            process.start()
        except OSError as exc:  # EAGAIN: this user may start no more processes; ENOMEM
            raise _not_started(number, exc) from exc
        finally:
            theirs.close()  # so the link reads EOF when the reader dies
            if process.pid is None:  # not started: no link
                ours.close()
        reader = _Reader(number, process, ReaderLink(ours))
        self._readers[number] = reader
        message = await reader.link.receive()
        if message is None or message[0] != "ready":
            reason = "it exited" if message is None else message[1]
            self._readers.pop(number, None)
            await asyncio.get_running_loop().run_in_executor(None, _reap, reader, KILL_AFTER_S)
            reader.link.close()
            raise ReaderStartError(f"reader process {number} failed to start: {reason}")
        reader.metrics_port = int(message[2])
        reader.ready = True
        logger.info("reader process %d ready (pid %d)", number, message[1])

    def _may_restart(self) -> bool:
        now = time.monotonic()
        self._restarts.append(now)
        while self._restarts and self._restarts[0] < now - RESTART_WINDOW_S:
            self._restarts.popleft()
        return len(self._restarts) <= MAX_RESTARTS


def _clear_error(error: str) -> str:
    """Why a reader did not clear, as ClearCache reports it."""
    return f"{RESTARTING}: it starts with empty caches" if error == RESTARTING else error


def _not_started(number: int, exc: OSError) -> ReaderStartError:
    return ReaderStartError(
        f"reader process {number} could not be started: {exc} (raise this user's process or "
        "open-file limit, or lower server.processes)"
    )


def _reap(reader: _Reader, timeout_s: float) -> None:
    """Wait for the reader to exit (SIGKILL after `timeout_s`) and reap it (on a worker thread:
    its link is closed on the loop's, ReaderLink.close)."""
    reader.process.join(timeout_s)
    if reader.process.is_alive():
        logger.warning("reader process %d did not stop in time: killing it", reader.number)
        reader.process.kill()
        reader.process.join()
