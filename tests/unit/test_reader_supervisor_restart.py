"""ReaderSupervisor cannot start a reader process (the user's process limit reached, or any other
failure to spawn): starting the server fails naming the fix, and the watcher gives up with the
reason instead of ending silently and leaving the reader dead. The reader that exits is a real
spawned stand-in (tests/link_answerer.py); only the spawn context's `start` is made to fail."""

from __future__ import annotations

import asyncio
import errno
import multiprocessing
import os
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import pytest

from server.load_board import NOT_SERVING, LoadBoard
from server.process_role import ProcessKind, ProcessRole
from server.reader_link import ReaderLink
from server.reader_supervisor import ReaderStartError, ReaderSupervisor, _Reader
from server.settings import Settings
from tests.link_answerer import answer_link

AT_PROCESS_LIMIT = OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))
"""What fork raises when this user may start no more processes."""


class _FailingSpawn:
    """The spawn context, but every process it makes raises `error` from `start`; it keeps
    the pipes it made, to check that none is left open."""

    def __init__(self, error: Exception) -> None:
        self._spawn = multiprocessing.get_context("spawn")
        self._error = error
        self.pipes: list[tuple[Connection, Connection]] = []

    def Pipe(self) -> tuple[Connection, Connection]:  # noqa: N802 - multiprocessing's name
        pipe = self._spawn.Pipe()
        self.pipes.append(pipe)
        return pipe

    def Process(self, **kwargs: Any) -> BaseProcess:  # noqa: N802 - multiprocessing's name
        process = self._spawn.Process(**kwargs)

        def start() -> None:
            raise self._error

        process.start = start  # type: ignore[method-assign]
        return process


def _supervisor(spawn: _FailingSpawn, sockets: Path) -> ReaderSupervisor:
    primary = ProcessRole(ProcessKind.PRIMARY, str(sockets), 0, 2)
    board = LoadBoard.create(primary.load_board, primary.processes)
    supervisor = ReaderSupervisor(Settings(), primary, board)
    supervisor._context = spawn  # type: ignore[assignment]
    return supervisor


def test_a_reader_that_cannot_be_started_fails_the_start_naming_the_fix(tmp_path: Path) -> None:
    spawn = _FailingSpawn(AT_PROCESS_LIMIT)
    with pytest.raises(ReaderStartError) as failed:
        asyncio.run(_supervisor(spawn, tmp_path).start("cpu"))
    assert str(failed.value) == (
        f"reader process 1 could not be started: {AT_PROCESS_LIMIT} (raise this user's process "
        "or open-file limit, or lower server.processes)"
    )
    assert [end.closed for pipe in spawn.pipes for end in pipe] == [True, True]


@pytest.mark.parametrize(
    "error",
    [AT_PROCESS_LIMIT, RuntimeError("cannot pickle the settings")],
    ids=["oserror", "other"],
)
def test_the_watcher_gives_up_when_a_dead_reader_cannot_be_started_again(
    error: Exception, tmp_path: Path
) -> None:
    spawn = _FailingSpawn(error)
    supervisor = _supervisor(spawn, tmp_path)
    board = LoadBoard(ProcessRole(sockets=str(tmp_path)).load_board, 2)
    board.set(1, 3)  # the reader served, with 3 calls under way when it died
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=answer_link, args=(theirs, 0.0), daemon=True)
    process.start()
    theirs.close()
    supervisor._readers = {1: _Reader(1, process, ReaderLink(ours), ready=True)}
    ours.close()  # the stand-in returns at EOF: the reader exits
    process.join(10)
    reasons: list[str] = []

    asyncio.run(asyncio.wait_for(supervisor.watch(reasons.append), timeout=10))

    assert len(reasons) == 1
    assert reasons[0].startswith("reader process 1 could not be started") == (
        error is AT_PROCESS_LIMIT
    )
    assert str(error) in reasons[0]
    assert supervisor.pids == {}
    assert [end.closed for pipe in spawn.pipes for end in pipe] == [True, True]
    assert board.get(1) == NOT_SERVING  # the other processes hand it no more reads
    board.close()
