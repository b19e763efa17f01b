"""`groundwire eval --dataset DIR`: IR metrics of each retrieval configuration on a BEIR dataset."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from core.catalog.collection_config import CollectionConfig
from core.embed.cached_embedder import CachedEmbedder
from core.embed.device import select_device
from core.embed.embedder_factory import build_embedder
from core.embed.onnx_build import cache_root as onnx_cache_root
from core.embed.protocol import Embedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.eval.beir import load_beir, subset
from core.eval.runner import BASELINE, TUNED_COLLECTION, Tuning, evaluate_configurations
from core.models import SourceType
from core.retrieve.expansion_policy import ExpansionPolicy, ExpansionStrategy
from core.retrieve.fusion import FusionMethod
from core.retrieve.modes import RetrievalMode
from core.retrieve.request import RetrievalRequest
from core.tune.collection_embedders import CollectionEmbedders
from core.tune.tuner import CollectionTuner, TuneReport
from server.process_count import query_model_threads
from server.settings import Settings

METRICS = ("mrr@10", "recall@10", "ndcg@10")


SECTION_WEIGHTS = (0.0, 0.25, 0.75, 1.0)
"""Section weights compared beside the default's (0 = chunk vectors only, 1 = section vectors only)."""


def variants(config: CollectionConfig) -> dict[str, CollectionConfig]:
    """Collections indexed besides the default one, by name (a configuration's `collection`)."""
    return {}


def configurations(settings: Settings) -> dict[str, RetrievalRequest]:
    """The configurations compared: dense at each section weight, each retriever alone, every
    fusion method at equal and at the default weights, the old default (chunks only), and the
    server default (the collection config and request a user gets with no options)."""
    r = settings.retrieval
    base = RetrievalRequest(
        query="",
        collection="",
        top_k=10,
        dense_weight=1.0,
        lexical_weight=1.0,
        section_weight=r.section_weight,
    )
    # Pinned to the candidates a request of top_k 10 searches with no options (50 per
    # retriever): `ranked_documents` asks for more hits to rank documents, which must not widen
    # the search beyond what a user's default request sees.
    base = replace(base, candidate_depth=base.depth)
    default = replace(
        base,
        mode=r.mode,
        fusion=r.fusion,
        rrf_k=r.rrf_k,
        dense_weight=r.dense_weight,
        lexical_weight=r.lexical_weight,
    )
    dense = replace(base, mode=RetrievalMode.DENSE)
    weights = {
        f"dense, section weight {w:g}{' (chunks only)' if w == 0 else ''}": replace(
            dense, section_weight=w
        )
        for w in SECTION_WEIGHTS
    }
    hybrid = replace(base, mode=RetrievalMode.HYBRID)
    return {
        **weights,
        "dense": dense,
        "lexical": replace(base, mode=RetrievalMode.LEXICAL),
        "hybrid": replace(hybrid, fusion=FusionMethod.RRF, rrf_k=60),
        "hybrid-weighted-equal": replace(hybrid, fusion=FusionMethod.WEIGHTED),
        "hybrid-dbsf": replace(hybrid, fusion=FusionMethod.DBSF),
        "hybrid-max": replace(hybrid, fusion=FusionMethod.MAX),
        "hybrid-rrf-bm25-0.25": replace(hybrid, fusion=FusionMethod.RRF, lexical_weight=0.25),
        "hybrid-dbsf-bm25-0.25": replace(hybrid, fusion=FusionMethod.DBSF, lexical_weight=0.25),
        "old default (chunks only, weighted bm25 0.25)": replace(default, section_weight=0.0),
        "default": default,
        "default, lexical candidates scored": replace(default, score_lexical_candidates=True),
        "default + expansion (smart)": replace(
            default, expansion=ExpansionPolicy(enabled=True, strategy=ExpansionStrategy.SMART)
        ),
    }


TUNED_LABELS = ("dense", "default", "old default (chunks only, weighted bm25 0.25)")
"""Configurations scored on the tuned copy too; the chunks-only one is what a tuned collection
ranked by before tunes re-embedded section vectors."""


def tuned_configurations(settings: Settings) -> dict[str, RetrievalRequest]:
    """`--tune`: the default and dense configurations (and the default without section
    vectors) on the tuned copy of the collection."""
    plain = configurations(settings)
    return {
        f"tuned {label}": replace(plain[label], collection=TUNED_COLLECTION)
        for label in TUNED_LABELS
    }


def run_eval(
    settings: Settings,
    dataset_dir: Path,
    as_json: bool,
    output: Path | None,
    cache: Path | None = None,
    subset_of: tuple[str, int] | None = None,
    tune: bool = False,
    markdown: bool = False,
) -> None:
    """Index the dataset in a temporary collection, score every configuration, print the table.

    `subset_of`: (id prefix, distractors) to run on part of the corpus (`core.eval.beir.subset`).
    `tune`: also tune a copy of the collection (settings `tune`) and score it ("tuned ..." rows).
    `markdown`: the document texts are indexed as Markdown (plain text otherwise).
    """
    dataset = load_beir(dataset_dir)
    if subset_of is not None:
        dataset = subset(dataset, *subset_of)
    device = select_device(settings.model.device)
    path = settings.model.embedding_model_path or default_model_path()
    embedder: Embedder = build_embedder(
        path,
        settings.model.runtime,
        device=device.device,
        batch_size=settings.model.batch_size,
        onnx_cache=onnx_cache_root(settings.model.onnx_cache_dir),
        onnx_threads=query_model_threads(settings.model.onnx_threads, processes=1),
    )
    if cache is not None:
        embedder = CachedEmbedder(embedder, cache)
    config = CollectionConfig(
        chunk_max_tokens=settings.indexing.chunk_max_tokens,
        embedding_model=embedder.model_name,
        embedding_dim=embedder.dimension,
    )
    bars: dict[str, tqdm] = {}
    tuning: Tuning | None = None
    if tune:
        embedders = CollectionEmbedders(
            embedder,
            lambda tuned: SentenceTransformerEmbedder(
                tuned, device.device, settings.model.batch_size
            ),
        )
        tuning = Tuning(CollectionTuner(embedders, device.device, path), embedders, settings.tune)
    reports: list[TuneReport] = []

    def progress(stage: str, n: int) -> None:
        if stage.startswith("tune "):
            if not as_json:
                print(f"tune: {stage[5:]}", flush=True)
            return
        if stage not in bars:
            per_document = stage.startswith("index") or stage == "baseline"
            total = len(dataset.corpus) if per_document else len(dataset.queries)
            bars[stage] = tqdm(
                total=total, desc=stage, unit="doc" if per_document else "q", disable=as_json
            )
        bars[stage].update(n)

    started = time.perf_counter()
    chosen = configurations(settings)
    if tune:
        chosen |= tuned_configurations(settings)
    results = evaluate_configurations(
        dataset,
        embedder,
        chosen,
        config,
        progress=progress,
        variants=variants(config),
        tuning=tuning,
        tune_reports=reports,
        source_type=SourceType.MARKDOWN if markdown else SourceType.TEXT,
    )
    for bar in bars.values():
        bar.close()
    report = {
        "dataset": str(dataset_dir),
        "subset": {"prefix": subset_of[0], "distractors": subset_of[1]} if subset_of else None,
        "source_type": "markdown" if markdown else "text",
        "documents": len(dataset.corpus),
        "queries": len(dataset.queries),
        "device": device.device,
        "seconds": round(time.perf_counter() - started, 1),
        "results": results,
    }
    if reports:
        report["tune"] = {
            "options": dataclasses.asdict(settings.tune),
            **dataclasses.asdict(reports[0]),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
    if output is not None:
        output.write_text(json.dumps(report, indent=2) + "\n")
    if as_json:
        print(json.dumps(report))
        return
    print(format_table(results))
    if reports:
        print(format_tune(reports[0]))


def format_table(results: dict[str, dict[str, float]]) -> str:
    """A Markdown table of every configuration with its deltas against the baseline row."""
    base = results[BASELINE]
    lines = [
        "| configuration | MRR@10 | Recall@10 | nDCG@10 | ΔMRR@10 | ΔR@10 |",
        "|---|---|---|---|---|---|",
    ]
    for label, metrics in results.items():
        lines.append(
            f"| {label} | "
            + " | ".join(f"{metrics[m]:.3f}" for m in METRICS)
            + f" | {metrics['mrr@10'] - base['mrr@10']:+.3f}"
            + f" | {metrics['recall@10'] - base['recall@10']:+.3f} |"
        )
    return "\n".join(lines)


def format_tune(report: TuneReport) -> str:
    """One line on what `--tune` did and what it cost."""
    return (
        f"tune: {report.pairs} pairs ({report.train_pairs} train, {report.held_out_pairs} held "
        f"out), {report.epochs} epoch(s), {report.steps} steps ({report.stopped_because}); "
        f"held-out top-1 {report.held_out_before:.3f} -> {report.held_out_after:.3f}; "
        f"train {report.train_seconds:.0f}s + re-embed {report.reembed_seconds:.0f}s "
        f"({report.chunks} chunks) + {report.section_seconds:.0f}s "
        f"({report.section_vectors} section vectors) = {report.total_seconds:.0f}s"
    )
