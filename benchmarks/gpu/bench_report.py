"""The GPU benchmark's report: targets checked against the same run's ceilings, printed tables,
and the JSON + Markdown files under benchmarks/results/."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def targets(results: dict[str, Any]) -> list[Row]:
    """The issue's targets, each with the measured value, the limit and whether it was met."""
    s = results["sections"]
    rows: list[Row] = []
    graph = [r for r in s.get("cuda_graph", []) if r.get("batch") == 1 and "graph_ms" in r]
    embed = [r for r in s.get("single_query_embedding", []) if r.get("embedder") == "default"]
    if graph and embed:
        best = min(r["p50_ms"] for r in embed)
        rows.append(
            _target("single-query embedding p50 (ms)", best, 2 * graph[0]["graph_ms"], "<=")
        )
    engine_rows = [r for r in s.get("dense_search", []) if r["role"] == "engine"]
    raw = s.get("matmul_top_k", [])
    single = [r for r in engine_rows if r["batch"] == 1]
    floors = [r for r in raw if r["batch"] == 1 and single and r["rows"] == single[0]["rows"]]
    if single and floors:
        best = min(r["p50_ms"] for r in single)
        limit = 1.5 * floors[0]["memory_floor_ms"]
        rows.append(_target("single-query dense search p50 (ms)", best, limit, "<="))
    if engine_rows and raw:
        largest = max(r["batch"] for r in engine_rows)
        mine = max(r["queries/s"] for r in engine_rows if r["batch"] == largest)
        ceiling = [r for r in raw if r["batch"] == largest and r["rows"] == engine_rows[0]["rows"]]
        if ceiling:
            limit = 0.5 * ceiling[0]["queries/s"]
            rows.append(_target(f"dense search queries/s at batch {largest}", mine, limit, ">="))
    batched, forward = s.get("batched_embedding", []), s.get("model_forward", [])
    if batched and forward:
        best = max(r["queries/s"] for r in batched)
        at_max = [r for r in forward if r["batch"] == batched[0]["max_batch"]]
        ceiling = at_max[0] if at_max else max(forward, key=lambda r: r["sentences/s"])
        limit = 0.5 * ceiling["sentences/s"]
        name = f"micro-batched embedding queries/s (raw forward at batch {ceiling['batch']})"
        rows.append(_target(name, best, limit, ">="))
    return rows


def _target(name: str, measured: float, limit: float, op: str) -> Row:
    met = measured <= limit if op == "<=" else measured >= limit
    return {
        "target": name,
        "measured": round(measured, 3),
        "limit": f"{op} {limit:.3f}",
        "met": met,
    }


def markdown_table(rows: list[Row]) -> str:
    """A Markdown table of `rows` (the union of their keys, in first-seen order)."""
    if not rows:
        return "(no rows)"
    keys: list[str] = []
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(k, "")) for k in keys) + " |")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def render(results: dict[str, Any]) -> str:
    """The whole report as Markdown: header, one table per section, targets, errors."""
    info = results["device"]
    parts = [
        f"# GPU benchmark ({results['date']}, {info['name']}){' — smoke' if results['smoke'] else ''}",
        "",
        "Produced by `benchmarks/gpu/gpu_bench.py`. "
        + ", ".join(f"{k}: {v}" for k, v in info.items()),
        "",
    ]
    for name, value in results["sections"].items():
        rows = value if isinstance(value, list) else [value]
        parts += [f"## {name}", "", markdown_table(rows), ""]
    parts += ["## targets", "", markdown_table(results["targets"]), ""]
    seconds = results.get("section_seconds", {})
    if seconds:
        parts += ["## seconds per section", "", markdown_table([seconds]), ""]
    if results["errors"]:
        parts += ["## errors and skipped sections", ""]
        parts += [f"- {name}: {message}" for name, message in results["errors"].items()]
        parts.append("")
    return "\n".join(parts)


def write(results: dict[str, Any], directory: Path, tag: str = "") -> tuple[Path, Path]:
    """Write gpu_bench-<device>[-smoke][-tag].{json,md} under `directory`; their paths."""
    slug = re.sub(r"[^a-z0-9]+", "-", results["device"]["name"].lower()).strip("-")
    stem = f"gpu_bench-{slug}{'-smoke' if results['smoke'] else ''}{f'-{tag}' if tag else ''}"
    directory.mkdir(parents=True, exist_ok=True)
    json_path, md_path = directory / f"{stem}.json", directory / f"{stem}.md"
    json_path.write_text(json.dumps(results, indent=2) + "\n")
    md_path.write_text(render(results))
    return json_path, md_path
