"""Query batches as one padded call against length groups (core/embed/length_groups.py).

Run from the repository root:
    python -m benchmarks.embed.length_groups [--rounds 5] [--onnx-cache DIR]

Texts: the real questions of every labelled set given (default: python-faq, perl-faq and r-faq),
in random batches of 4, 8, 16 and 32 (the micro-batcher's sizes under load; seed fixed). Each
batch is embedded by the ONNX runtimes (fp32, int8) two ways, taking turns per round: one padded
call (the previous behaviour: `call_overhead_tokens` huge) and the cost-model split. Reported per
cell: CPU ms per query (this process's CPU time, onnxruntime's pool threads included), wall ms per
batch, padded tokens per real token, calls per batch; and the largest difference between the two
ways' vectors (the split must not change them). `uptime` before and after.
Writes benchmarks/results/embed_length_groups.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.embed.question_sets import SETS
from benchmarks.embed.question_sets import questions as labelled_questions
from core.embed.length_groups import CALL_OVERHEAD_TOKENS, length_groups
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import cache_root, load_onnx_embedder
from core.embed.sentence_transformer_embedder import default_model_path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
BATCH_SIZES = (4, 8, 16, 32)
BATCHES_PER_CELL = 24
ONE_CALL = 10**9  # call_overhead_tokens that makes every batch one padded call


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _padding(embedder: Any, batch: list[str], overhead: int) -> tuple[int, int, int]:
    """(padded tokens, real tokens, calls) of embedding `batch` with `overhead`."""
    lengths = sorted(len(ids) for ids, _ in embedder.token_rows(batch, query=True))
    groups = length_groups(lengths, BATCH_SIZES[-1], overhead)
    padded = sum((stop - start) * lengths[stop - 1] for start, stop in groups)
    return padded, sum(lengths), len(groups)


def _time(embedder: Any, batches: list[list[str]], overhead: int) -> tuple[float, float]:
    """(CPU ms per query, wall ms per batch) over `batches`."""
    embedder.call_overhead_tokens = overhead
    cpu, wall = time.process_time(), time.perf_counter()
    for batch in batches:
        embedder.embed_queries(batch)
    queries = sum(len(b) for b in batches)
    return (
        (time.process_time() - cpu) * 1000 / queries,
        (time.perf_counter() - wall) * 1000 / len(batches),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--onnx-cache", default="")
    parser.add_argument("--sets", default=",".join(SETS), help="labelled sets, comma-separated")
    args = parser.parse_args()
    questions = labelled_questions(args.sets.split(","))
    rng = random.Random(0)
    cells = {
        size: [rng.sample(questions, size) for _ in range(BATCHES_PER_CELL)] for size in BATCH_SIZES
    }
    runtimes = (ModelRuntime.ONNX, ModelRuntime.ONNX_INT8)
    embedders = {
        r: load_onnx_embedder(Path(default_model_path()), cache_root(args.onnx_cache), r)
        for r in runtimes
    }
    ways = {"one padded call": ONE_CALL, "length groups": CALL_OVERHEAD_TOKENS}
    before = _uptime()
    samples: dict[tuple[str, int, str], list[tuple[float, float]]] = {}
    for round_ in range(args.rounds):
        for size, batches in cells.items():
            order = list(ways.items())
            if round_ % 2:
                order.reverse()
            for runtime, embedder in embedders.items():
                for way, overhead in order:
                    key = (runtime.value, size, way)
                    samples.setdefault(key, []).append(_time(embedder, batches, overhead))
    after = _uptime()
    rows = []
    for runtime, embedder in embedders.items():
        for size, batches in cells.items():
            differences = []
            for batch in batches[:6]:
                embedder.call_overhead_tokens = ONE_CALL
                one = embedder.embed_queries(batch)
                embedder.call_overhead_tokens = CALL_OVERHEAD_TOKENS
                differences.append(float(np.abs(one - embedder.embed_queries(batch)).max()))
            for way, overhead in ways.items():
                stats = [_padding(embedder, b, overhead) for b in batches]
                times = samples[(runtime.value, size, way)]
                rows.append(
                    {
                        "runtime": runtime.value,
                        "batch": size,
                        "way": way,
                        "cpu_ms_per_query": statistics.median(t[0] for t in times),
                        "wall_ms_per_batch": statistics.median(t[1] for t in times),
                        "padded_per_real_token": sum(s[0] for s in stats)
                        / sum(s[1] for s in stats),
                        "calls_per_batch": statistics.mean(s[2] for s in stats),
                        "max_vector_difference": max(differences),
                    }
                )
    _write(rows, args, before, after, len(questions))


def _write(rows: list[dict[str, Any]], args: Any, before: str, after: str, questions: int) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    meta = {
        "run": datetime.now(UTC).isoformat(timespec="seconds"),
        "sets": args.sets,
        "questions": questions,
        "rounds": args.rounds,
        "call_overhead_tokens": CALL_OVERHEAD_TOKENS,
        "uptime_before": before,
        "uptime_after": after,
    }
    (RESULTS / "embed_length_groups.json").write_text(
        json.dumps({"meta": meta, "rows": rows}, indent=2)
    )
    lines = [
        "# Query batches: one padded call against length groups",
        "",
        f"Run {meta['run']}, {questions} real questions ({args.sets}), random batches "
        f"({BATCHES_PER_CELL} per size), {args.rounds} rounds taking turns, median per cell; "
        f"call_overhead_tokens {CALL_OVERHEAD_TOKENS}.",
        f"Load before: `{before}`; after: `{after}`.",
        "",
        "| runtime | batch | way | CPU ms / query | wall ms / batch | padded / real tokens | calls / batch | max vector diff |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['runtime']} | {r['batch']} | {r['way']} | {r['cpu_ms_per_query']:.2f} | "
            f"{r['wall_ms_per_batch']:.1f} | {r['padded_per_real_token']:.2f} | "
            f"{r['calls_per_batch']:.1f} | {r['max_vector_difference']:.1e} |"
        )
    text = "\n".join(lines) + "\n"
    (RESULTS / "embed_length_groups.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
