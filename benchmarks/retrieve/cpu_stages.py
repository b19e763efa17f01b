"""Where a Retrieve spends its CPU time, stage by stage, and context assembly four ways.

Run from the repository root: .venv/bin/python -m benchmarks.retrieve.cpu_stages
    [--dataset DIR] [--sections N] [--embedding-cache FILE]

Indexes the first N python-faq sections with the real indexer into a temporary collection (FAISS
flat + Tantivy), then runs every python-faq query through the real RetrievalPipeline, with no
retrieval or query-embedding cache, in dense and hybrid mode, and reports each stage's mean and
median milliseconds. On a GPU server the model stages shrink to a few milliseconds and the rest
of this table is what keeps the GPU waiting.

Context assembly is then timed on the very same hits four ways, in the same run: tokenizing
every block and the finished context, or (the pipeline now) reading body sizes from the chunk's
stored `token_estimate` and trusting the summed size because the tokenizer provably adds up; each
on first sight (a plain tokenizer, no cache: chunks not seen before) and with the embedder's
token-count LRU warm (chunks seen before).
The contexts are compared byte for byte. Writes results/retrieve_cpu_stages.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from transformers import AutoTokenizer

from benchmarks.ghz.faq_index import DEFAULT_DATASET
from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.context.assembly import AssembledContext, assemble_context
from core.context.budget import ContextBudget
from core.embed.cached_embedder import CachedEmbedder
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)
from core.eval.beir import load_beir
from core.indexer import Indexer
from core.models import Document, Hit, SourceType
from core.retrieve.modes import RetrievalMode
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.query_text import normalize_query
from core.retrieve.request import RetrievalRequest
from core.retrieve.section_scores import SECTION_WEIGHT

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
COLLECTION = "stages"
INDEX_BATCH = 64


def build_collection(
    dataset: Path, sections: int, cache: Path
) -> tuple[CollectionCatalog, SentenceTransformerEmbedder, int, tempfile.TemporaryDirectory[str]]:
    """A catalog holding the first `sections` python-faq sections; the embedder; chunks stored."""
    data = load_beir(dataset)
    model = SentenceTransformerEmbedder(default_model_path(), "cpu")
    cached = CachedEmbedder(model, cache)
    workdir = tempfile.TemporaryDirectory(prefix="gw-cpu-stages-")
    catalog = CollectionCatalog(Path(workdir.name))
    catalog.open_all()
    config = CollectionConfig(embedding_model=model.model_name, embedding_dim=model.dimension)
    collection = catalog.create(DEFAULT_TENANT, COLLECTION, config)
    indexer = Indexer(cached, config.chunk_max_tokens, max_document_bytes=1 << 30)
    documents = [
        Document(doc.doc_id, doc.text, SourceType.TEXT, title=doc.title)
        for doc in list(data.corpus.values())[:sections]
    ]
    for start in range(0, len(documents), INDEX_BATCH):
        indexer.index(collection, documents[start : start + INDEX_BATCH])
    collection.checkpoint()
    return catalog, model, collection.store.counts()[1], workdir


def stage_table(
    pipeline: RetrievalPipeline,
    queries: Sequence[str],
    mode: RetrievalMode,
    section_weight: float = SECTION_WEIGHT,
) -> tuple[dict[str, list[float]], list[list[Hit]]]:
    """Per-stage milliseconds over all queries, and each query's hits."""
    stages: dict[str, list[float]] = defaultdict(list)
    hits: list[list[Hit]] = []
    for query in queries:
        started = time.perf_counter()
        request = RetrievalRequest(
            query=query, collection=COLLECTION, mode=mode, section_weight=section_weight
        )
        result = pipeline.retrieve(request)
        stages["total"].append((time.perf_counter() - started) * 1000.0)
        for name, ms in result.timings:
            stages[name].append(ms)
        hits.append(list(result.hits))
    return stages, hits


def time_assembly(
    hit_lists: Sequence[list[Hit]],
    queries: Sequence[str],
    count: Callable[[str], int],
    stored: bool = False,
) -> tuple[list[float], list[AssembledContext]]:
    """Milliseconds per assembly, and the contexts; `stored` turns on both pipeline hints."""
    budget = ContextBudget(max_tokens=2048)
    times: list[float] = []
    contexts: list[AssembledContext] = []
    for hits, query in zip(hit_lists, queries, strict=True):
        started = time.perf_counter()
        contexts.append(
            assemble_context(
                hits,
                budget,
                count,
                query=query,
                stored_token_counts=stored,
                additive_counts=stored,
            )
        )
        times.append((time.perf_counter() - started) * 1000.0)
    return times, contexts


def summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "mean_ms": round(statistics.fmean(values), 3),
        "p50_ms": round(statistics.median(values), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--dataset",
        type=Path,
        default=DEFAULT_DATASET,
        help="BEIR dir (default: $PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout)",
    )
    parser.add_argument("--sections", type=int, default=1000)
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        default=Path.home() / ".cache" / "groundwire" / "eval-embeddings.sqlite",
    )
    args = parser.parse_args()
    args.embedding_cache.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    catalog, model, chunks, workdir = build_collection(
        args.dataset, args.sections, args.embedding_cache
    )
    print(
        f"indexed {args.sections} sections ({chunks} chunks) in {time.perf_counter() - started:.0f} s"
    )
    queries = [normalize_query(q, 100_000) for q in load_beir(args.dataset).queries.values()]
    report: dict[str, object] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}",
        "sections": args.sections,
        "chunks": chunks,
        "queries": len(queries),
    }
    with ThreadPoolExecutor(2) as pool:
        pipeline = RetrievalPipeline(catalog, model, pool)
        stage_table(pipeline, queries[:10], RetrievalMode.DENSE)  # warm-up
        stages: dict[str, dict[str, dict[str, float]]] = {}
        dense_hits: list[list[Hit]] = []
        for mode in (RetrievalMode.DENSE, RetrievalMode.HYBRID):
            # Section scores off (before) and on (the default), one after the other: the same
            # collection, queries and load.
            for weight, label in ((0.0, " sections off"), (SECTION_WEIGHT, "")):
                per_stage, hits = stage_table(pipeline, queries, mode, weight)
                name = mode.name.lower() + label
                stages[name] = {stage: summary(v) for stage, v in per_stage.items()}
                dense_hits = dense_hits or hits
    report["stages"] = stages

    tokenizer = AutoTokenizer.from_pretrained(default_model_path(), local_files_only=True)

    def tokenize(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    ways: dict[str, tuple[list[float], list[AssembledContext]]] = {
        "first sight: tokenize everything": time_assembly(dense_hits, queries, tokenize),
        "first sight: stored counts + additive": time_assembly(
            dense_hits, queries, tokenize, stored=True
        ),
    }
    time_assembly(dense_hits, queries, model.count_tokens)  # fills the token-count cache
    ways["cache warm: tokenize everything"] = time_assembly(dense_hits, queries, model.count_tokens)
    ways["cache warm: stored counts + additive (the pipeline)"] = time_assembly(
        dense_hits, queries, model.count_tokens, stored=True
    )
    reference = ways["first sight: tokenize everything"][1]
    assembly = {}
    for name, (assembly_ms, contexts) in ways.items():
        assembly[name] = {
            **summary(assembly_ms),
            "identical_contexts": sum(a == b for a, b in zip(contexts, reference, strict=True)),
        }
    report["context_assembly"] = assembly
    catalog.close()
    workdir.cleanup()
    write(report)


def write(report: dict[str, object]) -> None:
    stages: dict[str, dict[str, dict[str, float]]] = report["stages"]  # type: ignore[assignment]
    names = list(dict.fromkeys(n for table in stages.values() for n in table))
    lines = ["| stage | " + " | ".join(f"{m} mean ms | {m} p50 ms" for m in stages) + " |"]
    lines.append("|---|" + "---|---|" * len(stages))
    for name in names:
        cells = [
            f"{stages[m][name]['mean_ms']:.3f} | {stages[m][name]['p50_ms']:.3f}"
            if name in stages[m]
            else "- | -"
            for m in stages
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    assembly: dict[str, dict[str, float]] = report["context_assembly"]  # type: ignore[assignment]
    lines += [
        "",
        "| context assembly (same hits, 2,048-token budget) | mean ms | p50 ms | identical contexts |",
    ]
    lines.append("|---|---|---|---|")
    for name, row in assembly.items():
        lines.append(
            f"| {name} | {row['mean_ms']:.3f} | {row['p50_ms']:.3f} | "
            f"{int(row['identical_contexts'])}/{report['queries']} |"
        )
    table = "\n".join(lines)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "retrieve_cpu_stages.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "retrieve_cpu_stages.md").write_text(
        f"# Retrieve CPU time by stage ({report['date']}, {report['machine']})\n\n"
        "Produced by `benchmarks/retrieve/cpu_stages.py`: python-faq, "
        f"{report['sections']} sections ({report['chunks']} chunks), {report['queries']} queries, "
        "the real pipeline on CPU with no retrieval or query-embedding cache (FAISS flat, "
        "Tantivy). `... sections off` columns run the same queries with section scores off "
        "(`section_weight` 0, the chunk-only ranking before section vectors). `embed` is the model on CPU; on a GPU server it is ~3 ms and the other stages "
        "are what keeps the GPU waiting. Dense runs first, so hybrid meets the store's chunk "
        "cache warmed by the same queries. Context assembly: *first sight* counts with a plain "
        "tokenizer and no cache (chunks never seen before), *cache warm* with the embedder's "
        "token-count LRU after a pass over the same hits.\n\n" + table + "\n"
    )


if __name__ == "__main__":
    main()
