"""Which runtime should embed passages on a CPU: torch (sentence-transformers), the fp32 ONNX
export or its per-token int8 copy in onnxruntime, on the work the indexer really gives the model.

Run from the repository root:
    python -m benchmarks.embed.passage_runtimes [--documents 300] [--rounds 2] [--sets a,b]
        [--runtimes torch,onnx-plain,onnx,onnx-int8] [--name SUFFIX]

For each labelled set (python-faq, perl-faq, r-faq; `question_sets.SETS`) a seeded random sample
of `--documents` corpus documents is indexed once by the real Indexer into a scratch collection
(section vectors and all, as `groundwire eval` indexes), through a wrapper that records every
`embed_documents` call: the chunk texts and section texts, in the indexer's own batches. Those
calls are then replayed by each runtime, taking turns per round (so machine load falls on both
alike): torch as the server ran passages before (sentence-transformers, batch 32, torch's
threads) and each ONNX runtime as the server's passage session runs it (an `OnnxEmbedder`, batch
32 split by `length_groups`, one intra-op thread per available core; `onnx` the file the build
serves, since groundwire-onnx-5 the fused graph, `onnx-plain` the unfused export beside it);
`--runtimes` picks them (default torch,onnx), the first the reference. Reported: texts/s (median
over rounds), CPU seconds of this process per round, the speed-up, and the cosine to the
reference's vector for every text (min and mean). `uptime` before and after.
Writes benchmarks/results/passage_runtimes[-<--name>].{json,md}.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.embed.plain_export import PLAIN, plain_export
from benchmarks.embed.question_sets import SETS
from benchmarks.ghz.machine import uptime
from core.catalog.catalog import CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.delegating_embedder import DelegatingEmbedder
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import cache_root, load_onnx_embedder
from core.embed.protocol import Embedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.eval.beir import load_beir
from core.eval.runner import index_dataset
from core.indexer import Indexer
from server.process_count import available_cores
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
FloatArray = npt.NDArray[np.float32]


class RecordingEmbedder(DelegatingEmbedder):
    """Delegates to `inner` and keeps every `embed_documents` call's texts."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.calls: list[list[str]] = []

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        self.calls.append(list(texts))
        return self._inner.embed_documents(texts)


def indexer_calls(name: str, documents: int, seed: int, embedder: Embedder) -> list[list[str]]:
    """The `embed_documents` calls the indexer makes for a sample of set `name`."""
    dataset = load_beir(SETS[name])
    ids = sorted(dataset.corpus)
    random.Random(seed).shuffle(ids)
    keep = set(ids[:documents])
    sample = replace(dataset, corpus={k: v for k, v in dataset.corpus.items() if k in keep})
    settings = Settings()
    recording = RecordingEmbedder(embedder)
    config = CollectionConfig(
        chunk_max_tokens=settings.indexing.chunk_max_tokens,
        embedding_model=embedder.model_name,
        embedding_dim=embedder.dimension,
    )
    with tempfile.TemporaryDirectory(prefix="gw-passages-") as tmp:
        catalog = CollectionCatalog(Path(tmp))
        catalog.open_all()
        indexer = Indexer(recording, config.chunk_max_tokens, max_document_bytes=1 << 30)
        index_dataset(sample, catalog, indexer, config, name="passages")
        catalog.close()
    return recording.calls


def replay(embedder: Embedder, calls: list[list[str]]) -> tuple[float, float, FloatArray]:
    """Wall and CPU seconds of replaying `calls`, and the vectors, in call order."""
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = [embedder.embed_documents(texts) for texts in calls]
    return time.perf_counter() - wall, time.process_time() - cpu, np.concatenate(vectors)


def measure(calls: list[list[str]], runtimes: dict[str, Embedder], rounds: int) -> dict[str, Any]:
    texts = sum(len(c) for c in calls)
    timings: dict[str, list[tuple[float, float]]] = {name: [] for name in runtimes}
    vectors: dict[str, FloatArray] = {}
    order = list(runtimes)
    for number in range(rounds):
        for name in order if number % 2 == 0 else order[::-1]:
            wall, cpu, vectors[name] = replay(runtimes[name], calls)
            timings[name].append((wall, cpu))
            print(f"  round {number} {name}: {texts / wall:.1f} texts/s", flush=True)
    reference = vectors[order[0]]
    reference_wall = statistics.median(w for w, _ in timings[order[0]])
    rows: dict[str, dict[str, Any]] = {}
    for name, runs in timings.items():
        wall = statistics.median(w for w, _ in runs)
        cosines = np.sum(reference * vectors[name], axis=1)
        rows[name] = {
            "texts_per_s": round(texts / wall, 2),
            "rounds_texts_per_s": [round(texts / w, 2) for w, _ in runs],
            "cpu_s_per_round": round(statistics.median(c for _, c in runs), 1),
            "speedup": round(reference_wall / wall, 3),
            "cosine_min": round(float(cosines.min()), 6),
            "cosine_mean": round(float(cosines.mean()), 6),
        }
    return {"calls": len(calls), "texts": texts, "runtimes": rows}


def markdown(report: dict[str, Any]) -> str:
    order = report["runtimes"]
    first = order[0]
    lines = [
        f"# Passage embedding: {', '.join(order)}, on the indexer's own calls",
        "",
        f"Run {report['date']}, {report['machine']}; {report['documents']} random documents per "
        f"set (seed {report['seed']}), {report['rounds']} rounds, runtimes taking turns. "
        f"Load before: `{report['uptime_before']}`; after: `{report['uptime_after']}`. "
        f"Speed-up and cosine against {first}, text by text.",
        "",
        "| set | calls | texts | runtime | texts/s (rounds) | x "
        + first
        + " | CPU s per round | cosine min / mean |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in report["sets"].items():
        for runtime in order:
            row = entry["runtimes"][runtime]
            rounds = " / ".join(map(str, row["rounds_texts_per_s"]))
            lines.append(
                f"| {name} | {entry['calls']} | {entry['texts']} | {runtime} "
                f"| {row['texts_per_s']} ({rounds}) | {row['speedup']:.2f}x "
                f"| {row['cpu_s_per_round']} | {row['cosine_min']:.6f} / {row['cosine_mean']:.6f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated")
    parser.add_argument("--onnx-cache", type=Path, default=cache_root(), help="ONNX builds")
    parser.add_argument(
        "--runtimes",
        default="torch,onnx",
        help="comma-separated, from torch, onnx, onnx-plain, onnx-int8; the first is the reference",
    )
    parser.add_argument("--name", default="", help="suffix of the result files")
    args = parser.parse_args()
    before = uptime()
    model = default_model_path()
    settings = Settings()
    runtimes = {
        name: _runtime(name, model, args.onnx_cache, settings.model.batch_size)
        for name in args.runtimes.split(",")
    }
    report: dict[str, Any] = {
        "runtimes": list(runtimes),
        "documents": args.documents,
        "seed": args.seed,
        "rounds": args.rounds,
        "uptime_before": before,
        "machine": f"{platform.machine()}, {available_cores()} cores",
        "sets": {},
    }
    for name in args.sets.split(","):
        print(name, flush=True)
        calls = indexer_calls(name, args.documents, args.seed, next(iter(runtimes.values())))
        report["sets"][name] = measure(calls, runtimes, args.rounds)
    report["uptime_after"] = uptime()
    report["date"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = "passage_runtimes" + (f"-{args.name}" if args.name else "")
    (RESULTS / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (RESULTS / f"{stem}.md").write_text(text + "\n")
    print(text)


def _runtime(name: str, model: str, onnx_cache: Path, batch_size: int) -> Embedder:
    """torch as the server ran passages before 2026-11-25; an ONNX runtime as the server's
    passage session runs it (batch 32 split by length groups, a thread per available core);
    `onnx-plain`: the fp32 export unfused, as the `onnx` variant served it until recipe
    groundwire-onnx-5 (`model.onnx` of the same build, the same session settings)."""
    if name == "torch":
        return SentenceTransformerEmbedder(model, "cpu", batch_size)
    built = load_onnx_embedder(
        Path(model),
        onnx_cache,
        ModelRuntime.ONNX if name == PLAIN else ModelRuntime(name),
        batch_size=batch_size,
        threads=available_cores(),
    )
    return plain_export(built, model, batch_size, available_cores()) if name == PLAIN else built


if __name__ == "__main__":
    main()
