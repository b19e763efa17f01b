"""ReaderSupervisor asks its readers to count and to clear their caches: stand-in reader
processes (tests/link_answerer.py; real spawned children on real links) answer at once or too
late. The one that is late is left out of the counts (with a warning naming it) and reported as
not cleared; a reader number without a running reader is reported as restarting."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.cache_clearing import CacheClear, ClearRequest
from server.cache_counting import CacheCounts
from server.load_board import LoadBoard
from server.process_role import ProcessKind, ProcessRole
from server.reader_link import ReaderLink
from server.reader_supervisor import ReaderSupervisor, _Reader
from server.settings import Settings
from tests.link_answerer import CLEARED, COUNTS, answer_link

PROMPT, SLOW = 1, 2
"""Reader numbers: one answers at once, one after a few seconds."""
SLOW_S = 1.5
TIMEOUT_S = 0.5


@pytest.fixture
def supervisor(tmp_path: Path) -> Iterator[ReaderSupervisor]:
    """Three reader numbers: 1 answers at once, 2 late, 3 has no reader running (restarting)."""
    context = multiprocessing.get_context("spawn")
    primary = ProcessRole(ProcessKind.PRIMARY, str(tmp_path), 0, 4)
    board = LoadBoard.create(primary.load_board, primary.processes)
    supervisor = ReaderSupervisor(Settings(), primary, board)
    readers = []
    for number, delay_s in ((PROMPT, 0.0), (SLOW, SLOW_S)):
        ours, theirs = context.Pipe()
        process = context.Process(target=answer_link, args=(theirs, delay_s), daemon=True)
        process.start()
        theirs.close()
        readers.append(_Reader(number, process, ReaderLink(ours), ready=True))
    # what `start` records once a reader reported ready
    supervisor._readers = {reader.number: reader for reader in readers}
    yield supervisor
    for reader in readers:
        reader.link.connection.close()  # the stand-in returns at EOF
        reader.process.join(10)
        if reader.process.is_alive():
            reader.process.kill()
            reader.process.join()
    board.close()


def test_counts_leave_out_a_reader_that_does_not_answer_in_time(
    supervisor: ReaderSupervisor, caplog: pytest.LogCaptureFixture
) -> None:
    pids = supervisor.pids
    with caplog.at_level(logging.WARNING, logger="server.reader_supervisor"):
        counts = asyncio.run(supervisor.count_caches("acme", "notes", TIMEOUT_S))
    assert counts == [CacheCounts(*COUNTS)]
    assert [record.getMessage() for record in caplog.records] == [
        f"Stats: reader process {SLOW} (pid {pids[SLOW]}) left out of the cache counters: "
        f"did not answer within {TIMEOUT_S:.1f} s",
        "Stats: reader process 3 (pid 0) left out of the cache counters: restarting",
    ]


def test_clearing_reports_a_reader_that_does_not_answer_in_time(
    supervisor: ReaderSupervisor,
) -> None:
    pids = supervisor.pids
    cleared = asyncio.run(supervisor.clear_caches(ClearRequest("acme", "notes"), TIMEOUT_S))
    assert cleared == [
        CacheClear(PROMPT, pids[PROMPT], True, *CLEARED),
        CacheClear(SLOW, pids[SLOW], False, error=f"did not answer within {TIMEOUT_S:.1f} s"),
        CacheClear(3, 0, False, error="restarting: it starts with empty caches"),
    ]


def test_a_late_answer_is_dropped_before_the_next_request_is_answered(
    supervisor: ReaderSupervisor,
) -> None:
    async def scenario() -> tuple[list[CacheCounts], list[CacheClear]]:
        counted = await supervisor.count_caches("acme", "notes", TIMEOUT_S)
        # the slow reader's late count is read and dropped; its answer to the clearing is kept
        cleared = await supervisor.clear_caches(ClearRequest("acme", None), 2 * SLOW_S + 1)
        return counted, cleared

    counted, cleared = asyncio.run(scenario())
    assert counted == [CacheCounts(*COUNTS)]
    assert [(c.process, c.cleared, c.retrieval_entries) for c in cleared] == [
        (PROMPT, True, CLEARED[0]),
        (SLOW, True, CLEARED[0]),
        (3, False, 0),
    ]
