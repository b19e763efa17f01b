"""ghz against one server per model runtime, interleaved: which runtime serves Retrieve fastest.

Run from the repository root:
    python -m benchmarks.ghz.runtimes [--quick] [--variants torch,onnx,onnx-int8] [--rounds 2]

Starts one `groundwire serve` per variant on a copy of the cached python-faq index built by that
variant's own code (benchmarks/ghz/faq_index.py run with the variant's environment, so a variant
whose PYTHONPATH names another checkout gets that checkout's collection defaults, e.g. its dense
index kind; variants with the same `core/` share one index) (caches off, as
benchmarks/ghz/run.py), then for every round, concurrency and workload runs ghz against
each server in turn (the order rotates every round), so each cell of the table is measured beside
the others under the same machine load. A variant is `NAME` (a `model.runtime` value) or
`LABEL:KEY=VALUE+KEY=VALUE` (server environment variables, e.g.
`split:GROUNDWIRE_MODEL__RUNTIME=onnx`). ONNX files are built once under `<data-dir>/models` and
shared by the servers through `GROUNDWIRE_MODEL__ONNX_CACHE_DIR`.

Writes results/ghz_runtimes{,-quick}.{md,json} (ghz's per-run reports stay under --data-dir): per
variant, workload and concurrency the median over rounds of RPS, p50, p99 and server cores busy,
with every round's values and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.ghz.faq_index import DEFAULT_CACHE, DEFAULT_DATASET, QUICK_SECTIONS
from benchmarks.ghz.ghz_runs import GhzTools, Load, run_ghz
from benchmarks.ghz.ghz_tool import GHZ_VERSION, ensure_ghz, ensure_html_report
from benchmarks.ghz.machine import machine_record, uptime
from benchmarks.ghz.request_files import WORKLOADS, load_questions, requests_for, write_data_file
from benchmarks.ghz.run import RESULTS, SERVER_ENV
from benchmarks.ghz.tree_memory import tree_rss_mib
from tests.serve_subprocess import ServeSubprocess


@dataclass(frozen=True, slots=True)
class Variant:
    """One server configuration: a label and the environment that selects it."""

    label: str
    env: dict[str, str]

    @property
    def cwd(self) -> Path | None:
        """Where its index build and server run: the first PYTHONPATH entry when it sets one (a
        `-m` module is found in the working directory before PYTHONPATH, so a variant started
        from this checkout would import this checkout's code whatever PYTHONPATH says), else the
        current directory."""
        first = self.env.get("PYTHONPATH", "").split(os.pathsep)[0]
        return Path(first) if first else None


def parse_variant(text: str) -> Variant:
    """`torch` -> model.runtime torch; `label:KEY=V+KEY=V` -> those variables."""
    if ":" not in text:
        return Variant(text, {"GROUNDWIRE_MODEL__RUNTIME": text})
    label, assignments = text.split(":", 1)
    env = dict(part.split("=", 1) for part in assignments.split("+") if part)
    return Variant(label, env)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SECTIONS} sections")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_CACHE, help="index/ghz cache")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--variants", default="torch,onnx,onnx-int8")
    parser.add_argument("--workloads", default="retrieve-default,retrieve-dense")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per ghz run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--suffix", default="", help="appended to the results' file names (--suffix=-run3)"
    )
    parser.add_argument(
        "--name", default="ghz_runtimes", help="results' file name (results/<name>.{md,json})"
    )
    return parser.parse_args()


def variant_index(
    variant: Variant, dataset: Path, cache: Path, quick: bool
) -> tuple[Path, dict[str, Any]]:
    """The index directory and READY record built by `variant`'s own code: faq_index run in a
    subprocess with the variant's environment (cached by its `core/` tree under `cache`)."""
    command = [sys.executable, "-m", "benchmarks.ghz.faq_index", "--dataset", str(dataset)]
    command += ["--data-dir", str(cache)] + (["--quick"] if quick else [])
    env = {**os.environ, **variant.env}
    output = subprocess.run(
        command, env=env, cwd=variant.cwd, check=True, capture_output=True, text=True
    ).stdout
    record: dict[str, Any] = json.loads(output[output.index("{") :])
    print(f"{variant.label}: index {record['data_dir']}", file=sys.stderr)
    return Path(record["data_dir"]), record


def variant_code(variant: Variant) -> str:
    """The directory the variant's server imports `core` and `server` from (recorded, so a
    comparison of two checkouts shows it compared two)."""
    probe = "import core, server, os; print(os.path.dirname(os.path.dirname(core.__file__)))"
    env = {**os.environ, **variant.env}
    return subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        cwd=variant.cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def main(args: argparse.Namespace | None = None) -> None:
    args = args or parse_args()
    variants = [parse_variant(v) for v in args.variants.split(",")]
    concurrency = [int(c) for c in args.concurrency.split(",")]
    workloads = [w for w in WORKLOADS if w.name in args.workloads.split(",")]
    suffix = ("-quick" if args.quick else "") + args.suffix
    tools = GhzTools(
        ghz=ensure_ghz(args.data_dir),
        html_report=ensure_html_report(args.data_dir),
        reports=args.data_dir / f"{args.name}{suffix}",  # per-run reports: not committed
    )
    if tools.reports.exists():
        shutil.rmtree(tools.reports)
    code = {v.label: variant_code(v) for v in variants}
    indexes = {v.label: variant_index(v, args.dataset, args.data_dir, args.quick) for v in variants}
    index = indexes[variants[0].label][1]
    questions = load_questions(args.dataset)
    onnx_cache = args.data_dir / "models"
    started_uptime = uptime()
    servers: dict[str, ServeSubprocess] = {}
    memory: dict[str, list[float]] = {}  # VmRSS MiB of each server's processes, at the end
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="gw-ghz-rt-") as tmp:
        try:
            for variant in variants:
                data_dir = Path(tmp) / variant.label / "data"
                shutil.copytree(indexes[variant.label][0], data_dir)
                env = {
                    **SERVER_ENV,
                    "GROUNDWIRE_MODEL__ONNX_CACHE_DIR": str(onnx_cache),
                    **variant.env,
                }
                log = Path(tmp) / f"{variant.label}.log"
                servers[variant.label] = ServeSubprocess.start(
                    data_dir, log, env, 900, cwd=variant.cwd
                )
                print(f"{variant.label}: started in {servers[variant.label].startup_s:.1f}s")
            files = {
                w.name: write_data_file(
                    Path(tmp) / f"{w.name}.json",
                    requests_for(w, questions, str(index["collection"])),
                )
                for w in workloads
            }
            for variant in variants:  # warm every server once
                server = servers[variant.label]
                warm = Load(concurrency=2, connections=1, duration_s=2.0)
                scratch = GhzTools(tools.ghz, tools.html_report, Path(tmp) / "warmup")
                for w in workloads:
                    run_ghz(
                        scratch, w.name, server.target, w.call, files[w.name], warm,
                        server.process.pid,
                    )  # fmt: skip
            for round_ in range(args.rounds):
                order = variants[round_ % len(variants) :] + variants[: round_ % len(variants)]
                for c in concurrency:
                    for w in workloads:
                        for variant in order:
                            server = servers[variant.label]
                            load = Load(c, min(args.connections, c), args.duration)
                            name = f"{variant.label}-{w.name}-c{c}-r{round_}"
                            row = run_ghz(
                                tools, name, server.target, w.call, files[w.name], load,
                                server.process.pid,
                            )  # fmt: skip
                            row.update(variant=variant.label, workload=w.name, round=round_)
                            rows.append(row)
                            print(
                                f"r{round_} {w.name} c={c} {variant.label}: "
                                f"{row['ok_rps']} RPS p50 {row['p50_ms']} p99 {row['p99_ms']} "
                                f"cores {row['server_cores_busy']} load {row['load_1m_after']}",
                                file=sys.stderr,
                            )
        finally:
            for label, server in servers.items():
                memory[label] = tree_rss_mib(server.process.pid)
                server.stop()
    record = {
        "ghz": f"github.com/bojand/ghz {GHZ_VERSION}",
        "corpus": {"documents": index["documents"], "chunks": index["chunks"]},
        "variants": {v.label: v.env for v in variants},
        "code": code,
        "indexes": {label: str(directory) for label, (directory, _) in indexes.items()},
        "connections": args.connections,
        "duration_s": args.duration,
        "rounds": args.rounds,
        "machine": machine_record(),
        "uptime_before": started_uptime,
        "uptime_after": uptime(),
        "rows": rows,
        "rss_mib": memory,
    }
    (RESULTS / f"{args.name}{suffix}.json").write_text(json.dumps(record, indent=2) + "\n")
    text = markdown(record, [v.label for v in variants], concurrency, [w.name for w in workloads])
    (RESULTS / f"{args.name}{suffix}.md").write_text(text)
    print(text)


def markdown(
    record: dict[str, Any], labels: list[str], concurrency: list[int], workloads: list[str]
) -> str:
    """Median over rounds per cell, every round's RPS beside it."""
    machine = record["machine"]
    lines = [
        "# ghz: one server per variant, interleaved",
        "",
        f"{machine['date']}, commit {machine['commit']}, {machine['cores']} cores, "
        f"{record['ghz']}. Corpus: python-faq, {record['corpus']['documents']} documents, "
        f"{record['corpus']['chunks']} chunks; caches off; {record['connections']} connection(s); "
        f"{record['duration_s']:g} s per run; {record['rounds']} rounds, every cell's runs "
        "interleaved with the other variants' (order rotating per round).",
        "",
        f"- load before: `{record['uptime_before']}`",
        f"- load after: `{record['uptime_after']}`",
        f"- variants: {json.dumps(record['variants'])}",
        f"- code each variant's server imports: {json.dumps(record.get('code', {}))}",
        "- resident memory at the end (MiB, each process of the server; the resource tracker of "
        f"multiprocessing is the small one): {json.dumps(record.get('rss_mib', {}))}",
        "",
        "| workload | c | variant | RPS (median; rounds) | p50 ms | p99 ms | errors "
        "| server cores busy | load 1 min |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for w in workloads:
        for c in concurrency:
            for label in labels:
                cell = [
                    r
                    for r in record["rows"]
                    if r["variant"] == label and r["workload"] == w and r["concurrency"] == c
                ]
                if not cell:
                    continue

                def med(key: str, digits: int = 1, rows: list[dict[str, Any]] = cell) -> str:
                    """The rounds' median, over the rounds that have the figure (a run whose
                    every call failed has no latency): "-" when none has it."""
                    values = [r[key] for r in rows if r[key] is not None]
                    return f"{statistics.median(values):.{digits}f}" if values else "-"

                each = " / ".join(f"{r['ok_rps']:.0f}" for r in cell)
                loads = " / ".join(f"{r['load_1m_after']:.1f}" for r in cell)
                errors = sum(r["errors"] for r in cell)
                lines.append(
                    f"| {w} | {c} | {label} | {med('ok_rps')} ({each}) | {med('p50_ms')} | "
                    f"{med('p99_ms')} | {errors} | {med('server_cores_busy', 2)} | {loads} |"
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
