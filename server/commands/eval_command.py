"""`groundwire eval --dataset DIR`: IR metrics of each retrieval configuration on a BEIR dataset."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from core.catalog.collection_config import CollectionConfig
from core.embed.cached_embedder import CachedEmbedder
from core.embed.device import select_device
from core.embed.protocol import Embedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.eval.beir import load_beir
from core.eval.runner import evaluate_configurations
from core.retrieve.expansion_policy import ExpansionPolicy, ExpansionStrategy
from core.retrieve.fusion import FusionMethod
from core.retrieve.modes import RetrievalMode
from core.retrieve.request import RetrievalRequest
from server.settings import Settings

METRICS = ("mrr@10", "recall@10", "ndcg@10")


def configurations(settings: Settings) -> dict[str, RetrievalRequest]:
    """The configurations compared: each retriever alone, textbook hybrid, and the server default."""
    base = RetrievalRequest(
        query="", collection="", top_k=10, candidate_depth=100, dense_weight=1.0, lexical_weight=1.0
    )
    r = settings.retrieval
    return {
        "dense": replace(base, mode=RetrievalMode.DENSE),
        "lexical": replace(base, mode=RetrievalMode.LEXICAL),
        "hybrid": replace(base, mode=RetrievalMode.HYBRID, fusion=FusionMethod.RRF, rrf_k=60),
        "hybrid-weighted-equal": replace(
            base,
            mode=RetrievalMode.HYBRID,
            fusion=FusionMethod.WEIGHTED,
            dense_weight=1.0,
            lexical_weight=1.0,
        ),
        "hybrid-max": replace(base, mode=RetrievalMode.HYBRID, fusion=FusionMethod.MAX),
        "hybrid-dbsf": replace(base, mode=RetrievalMode.HYBRID, fusion=FusionMethod.DBSF),
        "default": replace(
            base,
            mode=r.mode,
            fusion=r.fusion,
            rrf_k=r.rrf_k,
            dense_weight=r.dense_weight,
            lexical_weight=r.lexical_weight,
        ),
        "default + expansion (smart)": replace(
            base,
            mode=r.mode,
            fusion=r.fusion,
            rrf_k=r.rrf_k,
            dense_weight=r.dense_weight,
            lexical_weight=r.lexical_weight,
            expansion=ExpansionPolicy(enabled=True, strategy=ExpansionStrategy.SMART),
        ),
    }


def run_eval(
    settings: Settings,
    dataset_dir: Path,
    as_json: bool,
    output: Path | None,
    cache: Path | None = None,
) -> None:
    """Index the dataset in a temporary collection, score every configuration, print the table."""
    dataset = load_beir(dataset_dir)
    device = select_device(settings.model.device)
    path = settings.model.embedding_model_path or default_model_path()
    embedder: Embedder = SentenceTransformerEmbedder(path, device.device, settings.model.batch_size)
    if cache is not None:
        embedder = CachedEmbedder(embedder, cache)
    config = CollectionConfig(
        chunk_max_tokens=settings.indexing.chunk_max_tokens,
        embedding_model=embedder.model_name,
        embedding_dim=embedder.dimension,
    )
    bars: dict[str, tqdm] = {}

    def progress(stage: str, n: int) -> None:
        if stage not in bars:
            total = len(dataset.corpus) if stage == "index" else len(dataset.queries)
            bars[stage] = tqdm(
                total=total, desc=stage, unit="doc" if stage == "index" else "q", disable=as_json
            )
        bars[stage].update(n)

    started = time.perf_counter()
    results = evaluate_configurations(
        dataset, embedder, configurations(settings), config, progress=progress
    )
    for bar in bars.values():
        bar.close()
    report = {
        "dataset": str(dataset_dir),
        "documents": len(dataset.corpus),
        "queries": len(dataset.queries),
        "device": device.device,
        "seconds": round(time.perf_counter() - started, 1),
        "results": results,
    }
    if output is not None:
        output.write_text(json.dumps(report, indent=2) + "\n")
    if as_json:
        print(json.dumps(report))
        return
    print(f"{'configuration':<14}" + "".join(f"{m:>11}" for m in METRICS))
    for label, metrics in results.items():
        print(f"{label:<14}" + "".join(f"{metrics[m]:>11.3f}" for m in METRICS))
