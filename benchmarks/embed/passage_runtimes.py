"""Which runtime should embed passages on a CPU: torch (sentence-transformers) or the fp32 ONNX
export in onnxruntime, on the work the indexer really gives the model.

Run from the repository root:
    python -m benchmarks.embed.passage_runtimes [--documents 300] [--rounds 2] [--sets a,b]

For each labelled set (python-faq, perl-faq, r-faq; `question_sets.SETS`) a seeded random sample
of `--documents` corpus documents is indexed once by the real Indexer into a scratch collection
(section vectors and all, as `groundwire eval` indexes), through a wrapper that records every
`embed_documents` call: the chunk texts and section texts, in the indexer's own batches. Those
calls are then replayed by each runtime, taking turns per round (so machine load falls on both
alike): torch as the server ran passages before (sentence-transformers, batch 32, torch's
threads) and the fp32 export as `model.runtime = "auto"` runs them now (an `OnnxEmbedder`, batch
32 split by `length_groups`, one intra-op thread per available core). Reported: texts/s (median
over rounds), CPU seconds of this process per round, the speed-up, and the cosine between the two
runtimes' vectors for every text (min and mean). `uptime` before and after.
Writes benchmarks/results/passage_runtimes.{json,md}.
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
    first, second = (vectors[name] for name in order)
    cosines = np.sum(first * second, axis=1)
    rows = {
        name: {
            "texts_per_s": round(texts / statistics.median(w for w, _ in runs), 2),
            "rounds_texts_per_s": [round(texts / w, 2) for w, _ in runs],
            "cpu_s_per_round": round(statistics.median(c for _, c in runs), 1),
        }
        for name, runs in timings.items()
    }
    return {
        "calls": len(calls),
        "texts": texts,
        "runtimes": rows,
        "speedup": round(rows[order[1]]["texts_per_s"] / rows[order[0]]["texts_per_s"], 3),
        "cosine_min": round(float(cosines.min()), 6),
        "cosine_mean": round(float(cosines.mean()), 6),
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Passage embedding: torch vs the fp32 ONNX export, on the indexer's own calls",
        "",
        f"Run {report['date']}, {report['machine']}; {report['documents']} random documents per "
        f"set (seed {report['seed']}), {report['rounds']} rounds, runtimes taking turns. "
        f"Load before: `{report['uptime_before']}`; after: `{report['uptime_after']}`.",
        "",
        "| set | calls | texts | torch texts/s (rounds) | onnx texts/s (rounds) | onnx / torch "
        "| CPU s per round torch / onnx | cosine min / mean |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in report["sets"].items():
        torch_row, onnx_row = entry["runtimes"]["torch"], entry["runtimes"]["onnx"]
        lines.append(
            f"| {name} | {entry['calls']} | {entry['texts']} | {torch_row['texts_per_s']} "
            f"({' / '.join(map(str, torch_row['rounds_texts_per_s']))}) | "
            f"{onnx_row['texts_per_s']} ({' / '.join(map(str, onnx_row['rounds_texts_per_s']))}) "
            f"| {entry['speedup']:.2f}x | {torch_row['cpu_s_per_round']} / "
            f"{onnx_row['cpu_s_per_round']} | {entry['cosine_min']:.6f} / "
            f"{entry['cosine_mean']:.6f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated")
    parser.add_argument("--onnx-cache", type=Path, default=cache_root(), help="ONNX builds")
    args = parser.parse_args()
    before = uptime()
    model = default_model_path()
    settings = Settings()
    runtimes: dict[str, Embedder] = {
        "torch": SentenceTransformerEmbedder(model, "cpu", settings.model.batch_size),
        "onnx": load_onnx_embedder(
            Path(model),
            args.onnx_cache,
            ModelRuntime.ONNX,
            batch_size=settings.model.batch_size,
            threads=available_cores(),
        ),
    }
    report: dict[str, Any] = {
        "documents": args.documents,
        "seed": args.seed,
        "rounds": args.rounds,
        "uptime_before": before,
        "machine": f"{platform.machine()}, {available_cores()} cores",
        "sets": {},
    }
    for name in args.sets.split(","):
        print(name, flush=True)
        calls = indexer_calls(name, args.documents, args.seed, runtimes["onnx"])
        report["sets"][name] = measure(calls, runtimes, args.rounds)
    report["uptime_after"] = uptime()
    report["date"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "passage_runtimes.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (RESULTS / "passage_runtimes.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
