"""Time to first token and generation speed of each generator, through the real AnswerService.

Run: .venv/bin/python benchmarks/answer/answer_latency.py [--queries N]
Indexes the bundled demo corpus into a temporary collection, then answers the same questions with
each generator in turn: extractive (default), local Gemma-3-270M in-process (llama-cpp-python),
and the OpenAI-compatible generator against llama.cpp's bundled server with the same model.
Prints a table and writes benchmarks/results/answer_latency.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from core.answer.answer_service import AnswerRequest, AnswerService
from core.answer.events import AnswerSummary
from core.answer.extractive_generator import ExtractiveGenerator
from core.answer.llama_cpp_generator import (
    LlamaCppGenerator,
    LlamaCppGeneratorConfig,
    default_gguf_path,
)
from core.answer.openai_generator import OpenAIGenerator, OpenAIGeneratorConfig
from core.answer.prompts import PromptLibrary, default_prompts_dir
from core.answer.protocol import GenerationParams, Generator
from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.indexer import Indexer
from core.models import Document
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest
from tests.free_port import free_port

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
QUESTIONS = [
    "Why are Python strings immutable?",
    "How do I copy an object in Python?",
    "How do I make a Python script executable on Unix?",
    "Why does Python use indentation for grouping of statements?",
    "How do I read (or write) binary data?",
    "What is a class?",
    "How can I find the methods or attributes of an object?",
    "Why is join() a string method instead of a list or tuple method?",
]
MAX_TOKENS = 128


@contextmanager
def llama_server(model: Path) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server on a free loopback port; yields its base URL."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/models", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("llama.cpp server did not start") from None
                time.sleep(0.5)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


async def measure(service: AnswerService, questions: list[str]) -> dict[str, float]:
    """Median and p90 of first-token and total times, and mean tokens per second while generating."""
    first, total, speed, tokens = [], [], [], []
    for question in questions:
        request = AnswerRequest(
            RetrievalRequest(query=question, collection="demo", top_k=5),
            params=GenerationParams(max_tokens=MAX_TOKENS),
        )
        summary = [e async for e in service.answer(request)][-1]
        assert isinstance(summary, AnswerSummary)
        timings = dict(summary.timings)
        first.append(timings["first_token"])
        total.append(timings["total"])
        generating_s = max(timings["total"] - timings["first_token"], 1e-6) / 1000
        speed.append(summary.completion_tokens / generating_s)
        tokens.append(summary.completion_tokens)
    return {
        "retrieval_plus_first_token_ms_p50": statistics.median(first),
        "first_token_ms_p90": statistics.quantiles(first, n=10)[-1] if len(first) > 1 else first[0],
        "total_ms_p50": statistics.median(total),
        "completion_tokens_mean": statistics.mean(tokens),
        "tokens_per_s_mean": statistics.mean(speed),
    }


def build_pipeline(
    tmp: Path, embedder: SentenceTransformerEmbedder, pool: ThreadPoolExecutor
) -> RetrievalPipeline:
    catalog = CollectionCatalog(tmp)
    catalog.open_all()
    collection = catalog.create(
        DEFAULT_TENANT,
        "demo",
        CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension),
    )
    corpus = sorted((ROOT / "server" / "demo_corpus").glob("faq-*.md"))
    Indexer(embedder, 200, 1 << 24).index(
        collection, [Document(p.stem, p.read_text()) for p in corpus]
    )
    return RetrievalPipeline(catalog, embedder, pool)


async def run(questions: list[str]) -> dict[str, dict[str, float]]:
    embedder = SentenceTransformerEmbedder(default_model_path(), "cpu")
    prompts = PromptLibrary.load(default_prompts_dir())
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(4) as pool:
        pipeline = build_pipeline(Path(tmp), embedder, pool)
        model = default_gguf_path()
        generators: dict[str, Generator] = {
            "extractive": ExtractiveGenerator(embedder),
            "local (llama-cpp-python, in-process)": LlamaCppGenerator(
                LlamaCppGeneratorConfig(max_tokens=MAX_TOKENS)
            ),
        }
        for label, generator in generators.items():
            service = AnswerService(lambda: pipeline, generator, prompts, pool)
            await measure(service, questions[:1])  # warm-up: model load, first forward pass
            results[label] = await measure(service, questions)
            await generator.aclose()
        with llama_server(model) as base_url:
            generator = OpenAIGenerator(
                OpenAIGeneratorConfig(
                    base_url=base_url, model="gemma-3-270m", max_tokens=MAX_TOKENS
                )
            )
            service = AnswerService(lambda: pipeline, generator, prompts, pool)
            await measure(service, questions[:1])
            results["openai-compatible → llama.cpp server"] = await measure(service, questions)
            await generator.aclose()
    return results


def write_results(results: dict[str, dict[str, float]], queries: int, date: str) -> None:
    """Print the table and write benchmarks/results/answer_latency.{json,md}."""
    header = "| generator | retrieval + first token p50 (ms) | first token p90 (ms) | total p50 (ms) | tokens/answer | tokens/s |"
    rows = [header, "|---|---|---|---|---|---|"]
    for label, m in results.items():
        # The extractive generator has every sentence ready before the first is sent: no rate.
        speed = "n/a" if label == "extractive" else f"{m['tokens_per_s_mean']:.1f}"
        rows.append(
            f"| {label} | {m['retrieval_plus_first_token_ms_p50']:.0f} | {m['first_token_ms_p90']:.0f} | "
            f"{m['total_ms_p50']:.0f} | {m['completion_tokens_mean']:.0f} | {speed} |"
        )
    table = "\n".join(rows)
    print(table)
    meta = {
        "date": date,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "device": "cpu",
        "queries": queries,
        "max_tokens": MAX_TOKENS,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "answer_latency.json").write_text(
        json.dumps({**meta, "results": results}, indent=2) + "\n"
    )
    (RESULTS / "answer_latency.md").write_text(
        f"# Answer latency ({date}, {meta['cpus']} CPU cores, no GPU)\n\n"
        f"{queries} questions over the demo corpus, max {MAX_TOKENS} tokens, top-5 context, each generator\n"
        "warmed up with one question first. Times include retrieval; tokens/s is completion tokens over\n"
        "the time after the first token. Extractive 'tokens' are answer sentences, all ready at the\n"
        "first token. The Gemma-3-270M rows use llama.cpp's default thread count on 2 shared cores.\n\n"
        + table
        + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=len(QUESTIONS))
    parser.add_argument("--from-json", type=Path, help="re-render a results JSON written earlier")
    args = parser.parse_args()
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        write_results(saved["results"], saved["queries"], saved["date"])
        return
    results = asyncio.run(run(QUESTIONS[: args.queries]))
    write_results(results, args.queries, datetime.now(UTC).isoformat(timespec="seconds"))


if __name__ == "__main__":
    main()
