"""How much should BM25 count? A sweep of fusion weights (and dense pseudo-relevance feedback)
on python-faq, from one set of candidate lists per query.

Run: .venv/bin/python benchmarks/quality/fusion_sweep.py [--embedding-cache FILE]
Indexes the corpus through the real indexer (cached embeddings make this minutes), takes the top
100 dense and top 100 BM25 chunks per query through the real collection (BM25 gets the keyword
query the pipeline sends), then scores each fusion rule on the same lists; documents rank by their
best chunk. Prints a table and writes benchmarks/results/fusion_sweep.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.embed.cached_embedder import CachedEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.eval.beir import load_beir
from core.eval.metrics import evaluate_run
from core.eval.runner import EVAL_COLLECTION, index_dataset
from core.indexer import Indexer
from core.retrieve.fusion import FusionMethod, fuse
from core.retrieve.keywords import extract_keywords, lexical_query
from core.retrieve.query_text import normalize_query

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a file: `benchmarks` importable

from benchmarks.ghz.faq_index import DEFAULT_DATASET  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
DEPTH = 100
Ranking = list[tuple[int, float]]
Rule = Callable[[np.ndarray, Ranking, Ranking], Ranking]


def _candidates(
    args: argparse.Namespace,
) -> tuple[
    dict[str, tuple[np.ndarray, Ranking, Ranking]], dict[int, str], object, np.ndarray, np.ndarray
]:
    dataset = load_beir(args.dataset)
    inner = SentenceTransformerEmbedder(default_model_path(), "cpu", 32)
    embedder = CachedEmbedder(inner, args.embedding_cache)
    config = CollectionConfig(embedding_model=inner.model_name, embedding_dim=inner.dimension)
    catalog = CollectionCatalog(Path(tempfile.mkdtemp(prefix="fusion-sweep-")))
    catalog.open_all()
    index_dataset(dataset, catalog, Indexer(embedder, 200, 1 << 30), config)
    collection = catalog.get(DEFAULT_TENANT, EVAL_COLLECTION)
    parts = list(collection.store.iter_live_vectors())
    row_ids = np.concatenate([p[0] for p in parts])
    vectors = np.concatenate([p[1] for p in parts])
    documents = {rid: c.document_id for rid, c in collection.get_chunks(row_ids.tolist()).items()}
    lists = {}
    for query_id, text in dataset.queries.items():
        query = normalize_query(text, 100_000)
        vector = embedder.embed_queries([query])
        scores, ids = collection.dense_search(vector, DEPTH)
        dense = [(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
        lexical = collection.lexical_search(lexical_query(query, extract_keywords(query)), DEPTH)
        lists[query_id] = (vector[0], dense, lexical)
    return lists, documents, dataset, row_ids, vectors


def _weighted(dense_weight: float, lexical_weight: float) -> Rule:
    return lambda _, d, lx: fuse(FusionMethod.WEIGHTED, [d, lx], 60, [dense_weight, lexical_weight])


def _rrf(lexical_weight: float) -> Rule:
    return lambda _, d, lx: fuse(FusionMethod.RRF, [d, lx], 60, [1.0, lexical_weight])


def _prf(row_ids: np.ndarray, vectors: np.ndarray, k: int, beta: float) -> Rule:
    """Rocchio on the embeddings: move the query towards its top-k chunks, search again."""
    position = {int(r): i for i, r in enumerate(row_ids)}

    def rule(query: np.ndarray, dense: Ranking, _: Ranking) -> Ranking:
        centroid = vectors[[position[r] for r, _ in dense[:k]]].mean(axis=0)
        moved = query + beta * centroid
        scores = vectors @ (moved / np.linalg.norm(moved))
        top = np.argsort(-scores)[:DEPTH]
        return [(int(row_ids[i]), float(scores[i])) for i in top]

    return rule


def _documents(ranking: Ranking, documents: Mapping[int, str]) -> list[str]:
    seen: dict[str, None] = {}
    for row_id, _ in ranking:
        seen.setdefault(documents[row_id], None)
    return list(seen)[:10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--dataset",
        type=Path,
        default=DEFAULT_DATASET,
        help="BEIR dir (default: $PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout)",
    )
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        default=Path.home() / ".cache" / "groundwire" / "eval-embeddings.sqlite",
    )
    args = parser.parse_args()
    lists, documents, dataset, row_ids, vectors = _candidates(args)
    rules: dict[str, Rule] = {
        "dense alone": lambda _, d, lx: d,
        "BM25 alone (keyword query)": lambda _, d, lx: lx,
        "RRF k=60, equal weights": _rrf(1.0),
        "RRF k=60, BM25 weight 0.25": _rrf(0.25),
    }
    for weight in (0.1, 0.25, 0.5, 0.75, 1.0):
        label = f"weighted (min-max), BM25 weight {weight}"
        rules[label + (" - default" if weight == 0.25 else "")] = _weighted(1.0, weight)
    for k, beta in ((3, 0.5), (5, 0.5), (10, 0.5)):
        rules[f"dense + PRF (Rocchio, top {k}, beta {beta})"] = _prf(row_ids, vectors, k, beta)
    results: dict[str, dict[str, float]] = {}
    for label, rule in rules.items():
        run = {q: _documents(rule(v, d, lx), documents) for q, (v, d, lx) in lists.items()}
        results[label] = evaluate_run(run, dataset.qrels, 10)  # type: ignore[attr-defined]
    _write(results)


def _write(results: Mapping[str, Mapping[str, float]]) -> None:
    dense = results["dense alone"]
    lines = [
        "| rule | MRR@10 | Recall@10 | nDCG@10 | ΔMRR vs dense | ΔR@10 vs dense |",
        "|---|---|---|---|---|---|",
    ]
    for label, m in results.items():
        lines.append(
            f"| {label} | {m['mrr@10']:.3f} | {m['recall@10']:.3f} | {m['ndcg@10']:.3f} | "
            f"{m['mrr@10'] - dense['mrr@10']:+.3f} | {m['recall@10'] - dense['recall@10']:+.3f} |"
        )
    table = "\n".join(lines)
    print(table)
    date = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "fusion_sweep.json").write_text(
        json.dumps({"date": date, "results": results}, indent=2) + "\n"
    )
    (RESULTS / "fusion_sweep.md").write_text(
        f"# Fusion weight sweep on python-faq ({date}, CPU)\n\n"
        "Produced by `benchmarks/quality/fusion_sweep.py`: the same top-100 dense and BM25 chunk lists per\n"
        "query, fused by each rule; documents rank by their best chunk.\n\n" + table + "\n"
    )


if __name__ == "__main__":
    main()
