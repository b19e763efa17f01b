"""Durability under kill -9: rounds of ingest, SIGKILL at a random moment, restart, check.

Run from the repository root (the workload is shared with tests/e2e/test_crash_safety.py):
    python -m benchmarks.durability.crash_rounds --rounds 100 --seed 20261123

Each round streams upserts of 3-section documents (1-3 per call) into the real `groundwire serve`
process, SIGKILLs it 0-1 s (uniformly random) after the round's first acknowledged upsert, restarts
it and checks through the API: every acknowledged document is returned whole (else "lost"), no
returned document lacks a section ("half-written visible"), and Stats and dense/lexical retrieval
agree with the stored documents ("index mismatches"). After the last round the server stops
gracefully and the collection's files are read directly: the FAISS and Tantivy indexes on disk
must hold exactly SQLite's live chunk row ids at SQLite's sequence number. Prints a table, writes
benchmarks/results/crash_rounds.{json,md} and exits 1 when anything was lost, half-written or
inconsistent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.crash_driver import KILL_AFTER_S, CrashRounds, RoundResult
from tests.crash_workload import MAX_DOCUMENTS_PER_CALL, SECTIONS

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
COLUMNS = (
    "rounds",
    "acknowledged documents",
    "lost",
    "half-written visible",
    "index mismatches",
    "store integrity problems",
    "restart p50 (s)",
    "restart p95 (s)",
    "restart max (s)",
    "wall time (s)",
)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, round(q / 100 * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def run(
    rounds: int, seed: int, work_dir: Path, stop_after_s: float | None = None
) -> dict[str, Any]:
    """Run the rounds; returns the report (also when a round aborts with an exception).

    With `stop_after_s`, no round starts once that many seconds have passed (the report says
    how many ran of how many were asked for)."""
    started = time.monotonic()
    results: list[RoundResult] = []
    report: dict[str, Any] = {"aborted": None, "disk_problems": [], "exit_code": None}
    with CrashRounds(work_dir, seed) as crash:
        try:
            for round_no in range(rounds):
                if stop_after_s is not None and time.monotonic() - started > stop_after_s:
                    print(f"time budget of {stop_after_s:.0f} s used: stopping", flush=True)
                    break
                result = crash.run_round(round_no)
                results.append(result)
                print(_progress(result, rounds), flush=True)
            report["exit_code"], disk = crash.finish()
            report["disk_problems"] = disk.problems()
            report["disk"] = {"documents": len(disk.documents), "chunks": len(disk.chunks)}
        except Exception as exc:  # keep what was measured; the report says where it stopped
            report["aborted"] = f"round {len(results)}: {type(exc).__name__}: {exc}"
            print(f"aborted: {report['aborted']}", file=sys.stderr)
        ledger = crash.ledger
    restarts = [r.restart_s for r in results] or [0.0]
    report.update(
        rounds=len(results),
        acknowledged=len(set(ledger.acknowledged)),
        attempted=len(set(ledger.attempted)),
        visible_unacknowledged=(results[-1].check.visible - len(set(ledger.acknowledged)))
        if results
        else 0,
        lost=sorted({d for r in results for d in r.check.lost}),
        half_written=sorted({d for r in results for d in r.check.half_written}),
        index_mismatches=[
            f"round {r.round_no}: {m}" for r in results for m in r.check.index_mismatches
        ],
        store_problems=[
            f"round {r.round_no}: {m}" for r in results for m in r.check.store_problems
        ],
        server_errors=list(ledger.rejected),
        first_start_s=round(crash.first_start_s, 2),
        restart_s={
            "p50": round(percentile(restarts, 50), 2),
            "p95": round(percentile(restarts, 95), 2),
            "max": round(max(restarts), 2),
        },
        wall_s=round(time.monotonic() - started, 1),
        per_round=[_round_record(r) for r in results],
    )
    return report


def _progress(result: RoundResult, rounds: int) -> str:
    check = result.check
    state = "clean" if check.clean else f"PROBLEMS {asdict(check)}"
    return (
        f"round {result.round_no + 1}/{rounds}: killed after {result.killed_after_s:.2f}s, "
        f"{result.acknowledged} acknowledged, restart {result.restart_s:.1f}s, "
        f"{check.visible} documents visible, {state}"
    )


def _round_record(result: RoundResult) -> dict[str, Any]:
    return {
        "round": result.round_no,
        "killed_after_s": round(result.killed_after_s, 3),
        "acknowledged": result.acknowledged,
        "restart_s": round(result.restart_s, 2),
        "visible": result.check.visible,
        "lost": list(result.check.lost),
        "half_written": list(result.check.half_written),
        "index_mismatches": list(result.check.index_mismatches),
        "store_problems": list(result.check.store_problems),
    }


def table(report: dict[str, Any]) -> str:
    """The one-row Markdown table of the headline figures."""
    restart = report["restart_s"]
    mismatches = len(report["index_mismatches"]) + len(report["disk_problems"])
    row = (
        report["rounds"],
        report["acknowledged"],
        len(report["lost"]),
        len(report["half_written"]),
        mismatches,
        len(report["store_problems"]),
        f"{restart['p50']:.1f}",
        f"{restart['p95']:.1f}",
        f"{restart['max']:.1f}",
        f"{report['wall_s']:.0f}",
    )
    return "\n".join(
        [
            "| " + " | ".join(COLUMNS) + " |",
            "|" + "---|" * len(COLUMNS),
            "| " + " | ".join(str(v) for v in row) + " |",
        ]
    )


def failed(report: dict[str, Any]) -> bool:
    """Whether the run found any loss, partial document, disagreement or server error."""
    return bool(
        report["aborted"]
        or report["lost"]
        or report["half_written"]
        or report["index_mismatches"]
        or report["store_problems"]
        or report["disk_problems"]
        or report["server_errors"]
        or report["exit_code"] != 0
    )


def write(report: dict[str, Any]) -> None:
    """Print the table and write benchmarks/results/crash_rounds.{json,md}."""
    rendered = table(report)
    print(rendered)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "crash_rounds.json").write_text(json.dumps(report, indent=2) + "\n")
    notes = [
        f"Seed {report['seed']}. Each round: upserts of {SECTIONS}-section Markdown documents "
        f"(1-{MAX_DOCUMENTS_PER_CALL} per call) into `groundwire serve`, SIGKILL "
        f"{KILL_AFTER_S[0]}-{KILL_AFTER_S[1]} s (uniformly random) after the round's first "
        "acknowledged upsert, restart, then checks through the API.",
        f"{report['attempted']} documents sent; {report['visible_unacknowledged']} were committed "
        "but never acknowledged (killed between commit and reply) and are whole.",
        "Index mismatches count Stats/retrieval disagreements after each restart plus problems "
        f"found reading the stopped collection's files: {report['disk_problems'] or 'none'}.",
        "After every restart the store file is checked while the server runs "
        "(core/store/integrity.py: `PRAGMA integrity_check` without SQLite 3.40.1's known false "
        "`NULL value in` reports for WITHOUT ROWID tables, foreign keys, chunk/document "
        "agreement, nothing past the sequence) and its sequence must not be behind any "
        "acknowledged or earlier one; Stats must show dense and lexical at the store's sequence "
        f"with one dense vector per live chunk: {len(report['store_problems'])} problems.",
        f"Restart = process spawn to health SERVING (first start {report['first_start_s']} s); "
        f"server errors: {len(report['server_errors'])}; graceful stop exit code: "
        f"{report['exit_code']}.",
    ]
    if report["rounds"] < report["requested_rounds"]:
        notes.append(
            f"**{report['rounds']} of the {report['requested_rounds']} requested rounds ran**: "
            "the time budget (--stop-after-s) ran out on this shared machine."
        )
    if report["aborted"]:
        notes.append(f"**Aborted** at {report['aborted']}")
    (RESULTS / "crash_rounds.md").write_text(
        f"# Crash rounds ({report['date']}, {report['cpus']} CPU cores, {report['machine']})\n\n"
        + "\n".join(f"- {n}" for n in notes)
        + "\n\n"
        + rendered
        + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--work-dir", type=Path, help="keep the data and logs here (default: temp)")
    parser.add_argument(
        "--stop-after-s", type=float, help="start no round after this many seconds (default: none)"
    )
    args = parser.parse_args()
    meta = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "seed": args.seed,
        "requested_rounds": args.rounds,
    }
    if args.work_dir:
        args.work_dir.mkdir(parents=True, exist_ok=True)
        report = run(args.rounds, args.seed, args.work_dir, args.stop_after_s)
    else:
        with tempfile.TemporaryDirectory(prefix="gw-crash-") as tmp:
            report = run(args.rounds, args.seed, Path(tmp), args.stop_after_s)
    report = {**meta, **report}
    write(report)
    if failed(report):
        sys.exit(1)


if __name__ == "__main__":
    main()
