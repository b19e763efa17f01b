"""The Markdown summary of a ghz benchmark run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

COLUMNS = (
    ("workload", "workload"),
    ("concurrency", "c"),
    ("connections", "conns"),
    ("target_rps", "--rps"),
    ("ok_rps", "RPS (OK)"),
    ("p50_ms", "p50 ms"),
    ("p95_ms", "p95 ms"),
    ("p99_ms", "p99 ms"),
    ("calls", "calls"),
    ("errors", "errors"),
    ("server_cores_busy", "server cores busy"),
    ("ghz_cores_busy", "ghz cores"),
    ("load_1m_after", "load 1 min"),
)


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def markdown(
    rows: Sequence[dict[str, Any]], record: dict[str, Any] | None = None, header: bool = True
) -> str:
    """The table of `rows`, preceded (when `record` is given) by what, where and under which load."""
    lines = []
    if record is not None:
        machine = record["machine"]
        corpus = record["corpus"]
        lines += [
            f"# ghz against groundwire serve: {record['label']}",
            "",
            f"{machine['date']}, commit {machine['commit']}, {machine['cores']} cores "
            f"({machine['cpu']}), Python {machine['python']}, {record['ghz']}, {machine['go']}.",
            f"Corpus: python-faq, {corpus['documents']} documents, {corpus['chunks']} chunks; "
            f"{record['queries']} questions cycled; caches off; generator extractive.",
            "",
            "Machine load (numbers are only comparable with runs taken beside them):",
            f"- before: `{record['uptime_before']}`",
            f"- after: `{record['uptime_after']}`",
            "",
            "RPS counts OK calls per second of the run; `--rps` rows are the fixed-rate run at "
            "90 % of the best measured rate. Server cores busy: the server's process tree CPU "
            "time (/proc/<pid>/stat, children included) over the run's wall time.",
            "",
            "Packages: "
            + ", ".join(f"{name} {version}" for name, version in machine["packages"].items()),
            "",
        ]
    if header:
        lines.append("| " + " | ".join(title for _, title in COLUMNS) + " |")
        lines.append("|" + "---|" * len(COLUMNS))
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(key)) for key, _ in COLUMNS) + " |")
    return "\n".join(lines) + "\n"
