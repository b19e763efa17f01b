"""One summary row from a ghz JSON report (`-O json`): RPS, latency percentiles, errors."""

from __future__ import annotations

from typing import Any

NS_PER_MS = 1_000_000


def percentile_ms(report: dict[str, Any], percentage: int) -> float | None:
    """The report's latency at `percentage` (one of ghz's 10/25/50/75/90/95/99) in ms."""
    for entry in report.get("latencyDistribution") or []:
        if entry["percentage"] == percentage:
            return round(entry["latency"] / NS_PER_MS, 1)
    return None  # ghz leaves the distribution out when no call succeeded


def summarize(report: dict[str, Any]) -> dict[str, Any]:
    """RPS (completed calls per second, errors included, as ghz counts), OK calls per second,
    p50/p95/p99 ms, mean ms,
    calls, errors (calls whose status is not OK) and the error and status distributions."""
    statuses: dict[str, int] = report.get("statusCodeDistribution") or {}
    calls = int(report["count"])
    ok = int(statuses.get("OK", 0))
    return {
        "calls": calls,
        "ok": ok,
        "errors": calls - ok,
        "rps": round(float(report["rps"]), 2),
        "ok_rps": round(ok / (report["total"] / 1e9), 2) if report["total"] else 0.0,
        "mean_ms": round(report["average"] / NS_PER_MS, 1),
        "p50_ms": percentile_ms(report, 50),
        "p95_ms": percentile_ms(report, 95),
        "p99_ms": percentile_ms(report, 99),
        "wall_s": round(report["total"] / 1e9, 2),
        "status_codes": statuses,
        "error_distribution": report.get("errorDistribution") or {},
    }
