"""Rounds of a peers run folded into one table: each system's figures are the median over rounds,
and its throughput is also given as a ratio to a reference system measured in the same round.

A host's speed drifts (other tenants, thermal limits); a run that measures groundwire and then the
peers minutes later folds that drift into their ratio. run.py alternates the order of the two
sides every round, so a ratio taken within each round and its median over rounds cancel a drift
that is steady across the run and show the spread of one that is not. Within a round each side's
order is mirrored too (`groundwire_steps`, `peer_order`), so that the two figures of the headline
ratio, groundwire-default's Python row and the reference's, are always measured one after the
other, not minutes apart.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

LOAD_FIGURES = ("qps", "p50_ms", "p99_ms", "driver_cores_busy", "server_cores_busy")
GROUNDWIRE_STEPS = (
    ("dense", "python"),
    ("dense", "ghz"),
    ("default", "ghz"),
    ("default", "python"),
)
"""groundwire's (mode, driver) measurements when groundwire goes first in a round: the default
mode's Python row, the headline ratio's numerator, comes last, next to the peers."""


def system_name(mode: str, driver: str) -> str:
    """A groundwire row's name: `groundwire-<mode>`, with ` (ghz)` when ghz drove it."""
    return f"groundwire-{mode}" + (" (ghz)" if driver == "ghz" else "")


def groundwire_steps(groundwire_first: bool) -> tuple[tuple[str, str], ...]:
    """`GROUNDWIRE_STEPS`, reversed when the peers go first (the default's Python row first)."""
    return GROUNDWIRE_STEPS if groundwire_first else GROUNDWIRE_STEPS[::-1]


def peer_order(peers: Sequence[str], reference: str, groundwire_first: bool) -> list[str]:
    """The peer driver's systems (`chroma-embedded`, `chroma-http`, `lancedb`) in the order to
    measure them: the one that measures `reference` (`lancedb` for `lancedb-vector`) on
    groundwire's side, first when groundwire went first, last when it follows; the others in
    the given order."""
    near = [peer for peer in peers if reference.startswith(peer)]
    rest = [peer for peer in peers if peer not in near]
    return near + rest if groundwire_first else rest + near


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 2) if present else None


def _by_system(rounds: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, dict[str, Any]]]:
    """Each round's rows by system name."""
    return [{row["system"]: row for row in rows} for rows in rounds]


def fold_rounds(rounds: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per system (the first round's order, quality and ingest): each load figure the
    median over rounds, `qps_rounds` every round's QPS, `errors` and `calls` summed."""
    folded = []
    by_system = _by_system(rounds)
    for first in rounds[0]:
        same = [rows[first["system"]] for rows in by_system]
        loads = []
        for index, load in enumerate(first["load"]):
            per_round = [row["load"][index] for row in same]
            merged = {
                "threads": load["threads"],
                "calls": sum(p["calls"] for p in per_round),
                "errors": sum(p["errors"] for p in per_round),
                "qps_rounds": [p["qps"] for p in per_round],
            }
            for figure in LOAD_FIGURES:
                if figure in load:
                    merged[figure] = _median([p.get(figure) for p in per_round])
            loads.append(merged)
        folded.append({**first, "load": loads})
    return folded


def groundwire_probe(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The ingest probe of the first groundwire row among `rows` (every groundwire row of a round
    carries that round's probe), or None."""
    return next((row["ingest"] for row in rows if row["system"].startswith("groundwire")), None)


def ingest_rounds(rounds: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any] | None:
    """groundwire's ingest probe of every round (each round's server probes afresh): end-to-end
    chunks/s, the raw model's on the same chunks, their share and its median; None without a
    probe against the raw model."""
    measured = [
        probe for rows in rounds if (probe := groundwire_probe(rows)) and "raw_encode" in probe
    ]
    if not measured:
        return None
    shares = [probe["end_to_end_share_of_raw"] for probe in measured]
    return {
        "rounds": len(measured),
        "chunks_per_s": [probe["chunks_per_s"] for probe in measured],
        "raw_chunks_per_s": [probe["raw_encode"]["chunks_per_s"] for probe in measured],
        "share_of_raw": shares,
        "median_share_of_raw": _median(shares),
    }


def ratios(
    rounds: Sequence[Sequence[dict[str, Any]]], reference: str
) -> dict[str, list[dict[str, Any]]]:
    """For every system but `reference`, per thread count: its QPS over the reference's in each
    round, and their median (systems or rounds without the reference are left out)."""
    out: dict[str, list[dict[str, Any]]] = {}
    by_system = _by_system(rounds)
    if not all(reference in rows for rows in by_system):
        return out
    for first in rounds[0]:
        if first["system"] == reference:
            continue
        per_thread = []
        for index, load in enumerate(first["load"]):
            each = []
            for rows in by_system:
                mine = rows[first["system"]]["load"][index]["qps"]
                theirs = rows[reference]["load"][index]["qps"]
                each.append(round(mine / theirs, 2) if theirs else None)
            per_thread.append({"threads": load["threads"], "rounds": each, "median": _median(each)})
        out[first["system"]] = per_thread
    return out
