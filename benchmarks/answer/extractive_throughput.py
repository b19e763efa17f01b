"""Extractive Answer throughput, latency and quality side by side over gRPC: the baseline checkout
against this one's sentence scorings, in one run.

Run from the repository root: python -m benchmarks.answer.extractive_throughput
    [--baseline-tree ../main] [--scorings lexical shortlist all] [--quality-queries N]
    [--seconds S] [--rounds R] [--profile DIR]

One `groundwire serve` per variant, all started at once, each on its own copy of the indexed data
dir, caches off (every call embeds and searches): `main` runs the `--baseline-tree` checkout's
code at its defaults; each `--scorings` value runs this checkout with
`generator.extractive_scoring` set ("lexical": no model work, the default since issue #16;
"shortlist": a lexical shortlist embedded; "all": every context sentence embedded). Against each:
1. quality: the first N questions of each labelled FAQ set (python-faq, perl-faq; FAQ pages plus
   300 random distractor sections, `faq_answer_sets.py`) answered one at a time with the default
   request (top_k 10, 2,000-token budget), judged by `extractive_quality.py`;
2. load: 1 and 8 concurrent streams (one connection, python-faq questions cycling) for S seconds
   per row, rows interleaved (R rounds of one row per variant): answers/s, first-token and total
   latency seen by the client, server CPU (cores busy).
The load average (`uptime`) is recorded beside each load row. Prints a table and writes
benchmarks/results/extractive_throughput.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.answer.extractive_quality import Quality, agreement, judge
from benchmarks.answer.faq_answer_sets import DEFAULT_DATA, AnswerSet, ensure_indexed, load_sets
from benchmarks.ghz.machine import git_commit, uptime
from tests.serve_subprocess import ServeSubprocess

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
SCORINGS = ("all", "shortlist", "lexical")
STREAMS = (1, 8)
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


async def answer_once(client: Any, question: str, collection: str) -> dict[str, Any]:
    """One Answer: client-side first-token and total ms, text, context documents, summary."""
    from groundwire import AnswerFinished, AnswerStarted, TokenDelta

    started = time.perf_counter()
    first_ms = None
    context: set[str] = set()
    summary = None
    async for event in client.answer(question, collection=collection, timeout=300):
        if isinstance(event, AnswerStarted):
            context = {c.document_id for c in event.retrieval.context.citations}
        elif isinstance(event, TokenDelta) and first_ms is None:
            first_ms = (time.perf_counter() - started) * 1000
        elif isinstance(event, AnswerFinished):
            summary = event.summary
    total_ms = (time.perf_counter() - started) * 1000
    assert summary is not None
    server = {t.stage: t.millis for t in summary.timings}
    return {
        "choose_ms": server.get("first_token", 0.0) - server.get("retrieval", 0.0),
        "first_ms": first_ms if first_ms is not None else total_ms,
        "total_ms": total_ms,
        "text": summary.text,
        "context": context,
        "invalid": summary.invalid_citations,
        "faithfulness": summary.faithfulness,
    }


async def quality_run(
    target: str, answer_set: AnswerSet, limit: int
) -> tuple[Quality, list[float], list[float]]:
    """Answers to the set's first `limit` questions, one at a time; quality and first-token ms."""
    from groundwire import AsyncClient

    quality = Quality()
    firsts: list[float] = []
    chooses: list[float] = []
    async with AsyncClient(target, timeout=300) as client:
        for query_id, question in answer_set.questions(limit):
            got = await answer_once(client, question, answer_set.name)
            firsts.append(got["first_ms"])
            chooses.append(got["choose_ms"])
            quality.add(
                judge(
                    query_id,
                    got["text"],
                    got["context"],
                    answer_set.relevant(query_id),
                    got["invalid"],
                    got["faithfulness"],
                )
            )
    return quality, firsts, chooses


async def load_run(
    target: str, pid: int, collection: str, questions: list[str], streams: int, seconds: float
) -> dict[str, Any]:
    """`streams` concurrent answer loops over one channel for `seconds`."""
    from groundwire import AsyncClient

    firsts: list[float] = []
    totals: list[float] = []
    chooses: list[float] = []
    errors = 0
    counter = iter(range(1 << 30))
    load = uptime()
    async with AsyncClient(target, timeout=300) as client:
        await answer_once(client, questions[0], collection)  # warm the channel
        cpu_before = cpu_seconds(pid)
        started = time.perf_counter()
        deadline = started + seconds

        async def loop() -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                question = questions[next(counter) % len(questions)]
                try:
                    got = await answer_once(client, question, collection)
                except Exception:  # counted, the run goes on
                    errors += 1
                    continue
                firsts.append(got["first_ms"])
                totals.append(got["total_ms"])
                chooses.append(got["choose_ms"])

        await asyncio.gather(*(loop() for _ in range(streams)))
        elapsed = time.perf_counter() - started
        cores = (cpu_seconds(pid) - cpu_before) / elapsed
    return {
        "streams": streams,
        "answers": len(totals),
        "errors": errors,
        "seconds": elapsed,
        "rps": len(totals) / elapsed,
        "first_token_p50_ms": statistics.median(firsts) if firsts else None,
        "total_p50_ms": statistics.median(totals) if totals else None,
        "total_p99_ms": _p99(totals),
        "sentence_choice_p50_ms": statistics.median(chooses) if chooses else None,
        "server_cores_busy": cores,
        "uptime": load,
    }


def _p99(values: list[float]) -> float | None:
    if len(values) < 2:
        return values[0] if values else None
    return statistics.quantiles(values, n=100, method="inclusive")[98]


@dataclass(frozen=True, slots=True)
class Variant:
    """One server to measure: a label, the source tree it runs and its settings."""

    label: str
    tree: Path  # the checkout whose code the server runs (this one, or the baseline's)
    env: dict[str, str]


def variants(args: argparse.Namespace) -> list[Variant]:
    """The baseline checkout's default (`main`), then each scoring of this checkout."""
    out = []
    if args.baseline_tree is not None:
        out.append(Variant("main", args.baseline_tree.resolve(), {}))
    for scoring in args.scorings:
        env = {"GROUNDWIRE_GENERATOR__EXTRACTIVE_SCORING": scoring}
        out.append(Variant(scoring, ROOT, env))
    return out


def start_server(variant: Variant, data_dir: Path) -> ServeSubprocess:
    """A server for `variant` on its own copy of `data_dir` (caches off)."""
    copy = data_dir.parent / f"{data_dir.name}-{variant.label}"
    if not copy.exists():
        shutil.copytree(data_dir, copy)
    tree = str(variant.tree)
    env = {
        **variant.env,
        "GROUNDWIRE_CACHE__ENABLED": "false",
        "PYTHONPATH": f"{tree}:{tree}/clients/python",
    }
    log = data_dir.parent / f"serve-{variant.label}.log"
    with contextlib.chdir(tree):  # `python -m server` imports from its working directory first
        return ServeSubprocess.start(copy, log, env=env, timeout_s=600)


def measure(
    servers: dict[str, ServeSubprocess], sets: list[AnswerSet], args: argparse.Namespace
) -> dict[str, Any]:
    """Quality per variant, then the load rows interleaved: for each stream count, `rounds`
    rounds of one row per variant (so every variant sees the same machine load)."""
    results: dict[str, Any] = {
        label: {"quality": {}, "quality_objects": {}, "load": []} for label in servers
    }
    for label, server in servers.items():
        for answer_set in sets:
            quality, firsts, chooses = asyncio.run(
                quality_run(server.target, answer_set, args.quality_queries)
            )
            results[label]["quality"][answer_set.name] = {
                **quality.summary(),
                "sequential_first_token_p50_ms": statistics.median(firsts),
                "sequential_sentence_choice_p50_ms": statistics.median(chooses),
            }
            results[label]["quality_objects"][answer_set.name] = quality
            print(label, answer_set.name, results[label]["quality"][answer_set.name], flush=True)
    questions = [q for _, q in sets[0].questions(0)]
    for streams in args.streams:
        for round_number in range(args.rounds):
            for label, server in servers.items():
                profiler = None
                if args.profile and streams == max(args.streams) and round_number == 0:
                    profiler = subprocess.Popen(
                        [
                            str(Path(sys.executable).parent / "py-spy"),
                            "record",
                            "--pid",
                            str(server.process.pid),
                            "--format",
                            "raw",
                        ]
                        + ["--duration", str(int(args.seconds)), "--nonblocking"]
                        + ["--output", str(args.profile / f"answer-{label}-c{streams}.txt")],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                row = asyncio.run(
                    load_run(
                        server.target,
                        server.process.pid,
                        sets[0].name,
                        questions,
                        streams,
                        args.seconds,
                    )
                )
                if profiler is not None:
                    profiler.wait(timeout=args.seconds + 60)
                results[label]["load"].append({**row, "round": round_number + 1})
                print(label, row, flush=True)
    return results


def write_results(results: dict[str, Any], meta: dict[str, Any]) -> None:
    """Print the tables and write benchmarks/results/extractive_throughput.{json,md}."""
    load_rows = [
        "| variant | round | streams | answers/s | first token p50 (ms) | total p50 (ms) | total p99 (ms) "
        "| sentence choice p50 (ms, server) | server cores busy | errors | load (uptime) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    quality_rows = [
        "| variant | set | answers | answerable | top sentence relevant | any sentence relevant "
        "| no answer | invalid citations | faithfulness | first token p50 (ms, sequential) "
        "| sentence choice p50 (ms, server) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    order = {label: n for n, label in enumerate(results)}
    rows = sorted(
        ((label, r) for label, out in results.items() for r in out["load"]),
        key=lambda row: (row[1]["streams"], row[1]["round"], order[row[0]]),
    )  # as they ran: interleaved
    for label, r in rows:
        load_rows.append(
            f"| {label} | {r['round']} | {r['streams']} | {r['rps']:.2f} "
            f"| {r['first_token_p50_ms']:.0f} | {r['total_p50_ms']:.0f} | {r['total_p99_ms']:.0f} "
            f"| {r['sentence_choice_p50_ms']:.0f} | {r['server_cores_busy']:.2f} | {r['errors']} "
            f"| {r['uptime'].split('load')[-1]} |"
        )
    for scoring, out in results.items():
        for name, q in out["quality"].items():
            quality_rows.append(
                f"| {scoring} | {name} | {q['answers']} | {q['answerable']} "
                f"| {q['top_relevant']:.3f} | {q['any_relevant']:.3f} | {q['no_answer']:.3f} "
                f"| {q['invalid_citations']} | {q['faithfulness_mean']:.3f} "
                f"| {q['sequential_first_token_p50_ms']:.0f} "
                f"| {q['sequential_sentence_choice_p50_ms']:.0f} |"
            )
    tables = "\n".join(load_rows) + "\n\n" + "\n".join(quality_rows) + "\n"
    agree = meta.get("top_sentence_agreement", {})
    if agree:
        tables += (
            "\nFirst sentence identical to the `all` scorer's: "
            + ", ".join(f"{name} {value:.3f}" for name, value in agree.items())
            + "\n"
        )
    print(tables)
    RESULTS.mkdir(parents=True, exist_ok=True)
    plain = {
        s: {k: v for k, v in out.items() if k != "quality_objects"} for s, out in results.items()
    }
    (RESULTS / "extractive_throughput.json").write_text(
        json.dumps({**meta, "results": plain}, indent=2) + "\n"
    )
    trees = ", ".join(f"{label}: {commit}" for label, commit in meta["commits"].items())
    (RESULTS / "extractive_throughput.md").write_text(
        f"# Extractive Answer: side by side ({meta['date']})\n\n"
        f"{meta['cpus']} CPU cores shared with other jobs, no GPU; one `groundwire serve` per "
        f"variant ({trees}; `main` is the baseline checkout at its default settings, the others "
        "this checkout with `generator.extractive_scoring` set), all started at once, caches "
        "off, default Answer request (top_k 10, 2,000-token context). Load: "
        f"{meta['seconds']:.0f} s per row, rows interleaved (one per variant per round), "
        "python-faq questions cycling over one gRPC channel; "
        "latencies as the client sees them; sentence choice is the server's own first-token time "
        "minus its retrieval time (the generator's share). Quality: first "
        f"{meta['quality_queries'] or 'all'} questions per set, answered one at a time; "
        "'answerable' = the relevant section is in the context, the relevant shares are over "
        "those. Sets: FAQ pages + 300 random distractor sections.\n\n" + tables
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--data-dir", type=Path, default=DEFAULT_DATA, help="indexed sets (default: %(default)s)"
    )
    parser.add_argument("--distractors", type=int, default=300)
    parser.add_argument("--quality-queries", type=int, default=100, help="per set; 0: all")
    parser.add_argument("--seconds", type=float, default=30.0, help="per load row")
    parser.add_argument("--rounds", type=int, default=2, help="load rows per variant and streams")
    parser.add_argument("--streams", type=int, nargs="+", default=list(STREAMS))
    parser.add_argument(
        "--profile", type=Path, help="py-spy the server (collapsed stacks) at the most streams"
    )
    parser.add_argument("--scorings", nargs="+", default=list(SCORINGS), choices=SCORINGS)
    parser.add_argument(
        "--baseline-tree",
        type=Path,
        help="also serve this checkout's code at its defaults (variant `main`), e.g. ../main",
    )
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    sets = load_sets(args.distractors)
    servers: dict[str, ServeSubprocess] = {}
    try:
        for variant in variants(args):
            if not servers:  # index once (first server), then every variant copies the data
                first = start_server(Variant("index", ROOT, {}), args.data_dir)
                try:
                    ensure_indexed(first.target, sets)
                finally:
                    first.stop()
            servers[variant.label] = start_server(variant, args.data_dir)
        results = measure(servers, sets, args)
    finally:
        for server in servers.values():
            server.stop()
    meta: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "seconds": args.seconds,
        "rounds": args.rounds,
        "quality_queries": args.quality_queries,
        "distractors": args.distractors,
        "commits": {v.label: git_commit(v.tree) for v in variants(args)},
    }
    if "all" in results:
        meta["top_sentence_agreement"] = {
            name: agreement(results["all"]["quality_objects"][name], out["quality_objects"][name])
            for label, out in results.items()
            if label != "all"
            for name in out["quality_objects"]
        }
    write_results(results, meta)


if __name__ == "__main__":
    main()
