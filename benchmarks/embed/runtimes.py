"""Raw encode speed and agreement of the embedding runtimes: torch fp32, onnx fp32, onnx int8.

Run from the repository root:
    python -m benchmarks.embed.runtimes [--onnx-cache DIR] [--scale 1.0]

Texts: python-faq's real queries ($PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout,
as `benchmarks/ghz/faq_index.py` finds it) and passages of exactly 200 tokens cut from its corpus
(the server's chunk size). For each text kind and batch size 1, 8 and 32 the runtimes take turns,
one batch each per round (so machine load falls on all of them alike), each round on the next
texts; the table gives the median ms per batch and texts/s from it. onnx-int8 runs twice:
onnxruntime's default threads (one per core) and one thread, to show whether `model.onnx_threads`
matters. Cosine vs torch: every query and passage used, embedded by each runtime in batches of 32,
min and mean. `uptime` is recorded before and after.
Writes benchmarks/results/embed_runtimes.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.ghz.faq_index import DEFAULT_CACHE, DEFAULT_DATASET
from benchmarks.ghz.machine import uptime
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import load_onnx_embedder
from core.embed.protocol import Embedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.eval.beir import load_beir

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
PASSAGE_TOKENS = 200
BATCHES = (1, 8, 32)
ROUNDS = {("query", 1): 40, ("query", 8): 12, ("query", 32): 6}
ROUNDS |= {("passage", 1): 12, ("passage", 8): 4, ("passage", 32): 3}


def passages(tokenizer: Any, texts: Sequence[str], count: int) -> list[str]:
    """Up to `count` passages of exactly PASSAGE_TOKENS tokens, cut from `texts`."""
    out: list[str] = []
    for text in texts:
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = encoded["offset_mapping"]
        if len(offsets) >= PASSAGE_TOKENS:
            out.append(text[: offsets[PASSAGE_TOKENS - 1][1]])
        if len(out) == count:
            break
    return out


def timed(embed: Callable[[Sequence[str]], Any], texts: Sequence[str]) -> float:
    started = time.perf_counter()
    embed(texts)
    return (time.perf_counter() - started) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--onnx-cache",
        type=Path,
        default=DEFAULT_CACHE / "onnx" / "models",
        help="ONNX builds (default: %(default)s)",
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the rounds")
    args = parser.parse_args()
    uptime_before = uptime()
    model = default_model_path()
    torch_embedder = SentenceTransformerEmbedder(model, "cpu", 32)
    runtimes: dict[str, Embedder] = {"torch fp32": torch_embedder}
    for label, runtime, threads in (
        ("onnx fp32", ModelRuntime.ONNX, 0),
        ("onnx int8", ModelRuntime.ONNX_INT8, 0),
        ("onnx int8, 1 thread", ModelRuntime.ONNX_INT8, 1),
    ):
        runtimes[label] = load_onnx_embedder(Path(model), args.onnx_cache, runtime, threads=threads)
    dataset = load_beir(DEFAULT_DATASET)
    queries = list(dataset.queries.values())
    texts = {
        "query": queries,
        "passage": passages(
            torch_embedder._tokenizer, [d.text for d in dataset.corpus.values()], 160
        ),
    }
    for embedder in runtimes.values():  # warm up: first calls allocate
        embedder.embed_queries(queries[:8])
        embedder.embed_documents(texts["passage"][:8])
    timings: dict[str, dict[str, list[float]]] = {name: {} for name in runtimes}
    for (kind, batch), rounds in ROUNDS.items():
        pool = texts[kind]
        for round_number in range(max(1, round(rounds * args.scale))):
            start = (round_number * batch) % max(1, len(pool) - batch)
            chunk = pool[start : start + batch]
            names = list(runtimes)
            shift = round_number % len(names)
            for name in names[shift:] + names[:shift]:  # rotate who goes first
                embedder = runtimes[name]
                embed = embedder.embed_queries if kind == "query" else embedder.embed_documents
                timings[name].setdefault(f"{kind} x{batch}", []).append(timed(embed, chunk))
        print(f"{kind} x{batch} done", flush=True)
    agreement = cosines(runtimes, texts)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "torch_threads": torch.get_num_threads(),
        "uptime_before": uptime_before,
        "uptime_after": uptime(),
        "passage_tokens": PASSAGE_TOKENS,
        "timings_ms": timings,
        "cosine_vs_torch": agreement,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "embed_runtimes.json").write_text(json.dumps(report, indent=2) + "\n")
    table = markdown(report)
    (RESULTS / "embed_runtimes.md").write_text(table + "\n")
    print(table)


def cosines(
    runtimes: dict[str, Embedder], texts: dict[str, list[str]]
) -> dict[str, dict[str, float]]:
    """Per runtime and text kind: min and mean cosine with torch fp32's vectors."""
    out: dict[str, dict[str, float]] = {}
    reference = {
        "query": runtimes["torch fp32"].embed_queries(texts["query"]),
        "passage": runtimes["torch fp32"].embed_documents(texts["passage"]),
    }
    for name, embedder in runtimes.items():
        for kind, pool in texts.items():
            embed = embedder.embed_queries if kind == "query" else embedder.embed_documents
            values = np.sum(embed(pool) * reference[kind], axis=1)
            out.setdefault(name, {})[f"{kind} min"] = round(float(values.min()), 5)
            out[name][f"{kind} mean"] = round(float(values.mean()), 5)
    return out


def markdown(report: dict[str, Any]) -> str:
    timings: dict[str, dict[str, list[float]]] = report["timings_ms"]
    columns = list(next(iter(timings.values())))
    lines = [
        "# Embedding runtimes: raw encode speed and agreement with torch",
        "",
        f"Run {report['date']} on {report['machine']} (torch threads {report['torch_threads']}); "
        f"passages of {report['passage_tokens']} tokens; median of interleaved rounds.",
        f"Load before: `{report['uptime_before']}`",
        f"Load after: `{report['uptime_after']}`",
        "",
        "ms per batch (texts/s):",
        "",
        "| runtime | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for name, per_column in timings.items():
        cells = []
        for column in columns:
            median = statistics.median(per_column[column])
            batch = int(column.rsplit("x", 1)[1])
            cells.append(f"{median:.1f} ({batch * 1000.0 / median:.0f}/s)")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    base = timings["torch fp32"]
    lines += ["", "Speed-up over torch fp32 (ratio of medians):", ""]
    lines += ["| runtime | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for name, per_column in timings.items():
        ratios = [statistics.median(base[c]) / statistics.median(per_column[c]) for c in columns]
        lines.append(f"| {name} | " + " | ".join(f"{r:.2f}x" for r in ratios) + " |")
    agreement: dict[str, dict[str, float]] = report["cosine_vs_torch"]
    keys = list(next(iter(agreement.values())))
    lines += ["", "Cosine with torch fp32's vectors:", ""]
    lines += ["| runtime | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys)]
    for name, values in agreement.items():
        lines.append(f"| {name} | " + " | ".join(f"{values[k]:.5f}" for k in keys) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
