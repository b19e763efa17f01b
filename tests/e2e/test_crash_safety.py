"""kill -9 the real server while it ingests; after each restart every acknowledged document is
there, nothing half-written is visible, and both derived indexes agree with the SQLite store.

The workload and checks live in tests/crash_workload.py and tests/crash_driver.py, shared with
benchmarks/durability/crash_rounds.py (which runs 100 rounds).
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.crash_driver import CrashRounds
from tests.crash_workload import SECTIONS

ROUNDS = int(os.environ.get("CRASH_TEST_ROUNDS", "20"))
SEED = 20261123


def test_kill_9_never_loses_acknowledged_documents(tmp_path: Path) -> None:
    with CrashRounds(tmp_path, SEED) as rounds:
        for round_no in range(ROUNDS):
            result = rounds.run_round(round_no)
            assert result.check.lost == (), f"round {round_no}"
            assert result.check.half_written == (), f"round {round_no}"
            assert result.check.index_mismatches == (), f"round {round_no}"
            assert result.check.store_problems == (), f"round {round_no}"
        exit_code, disk = rounds.finish()
    assert exit_code == 0
    assert disk.problems() == []
    assert rounds.ledger.rejected == []
    assert len(disk.chunks) == SECTIONS * len(disk.documents)
    assert len(disk.documents) >= len(rounds.ledger.acknowledged)
    assert len(rounds.ledger.acknowledged) > ROUNDS, "too few acknowledged documents to test"
