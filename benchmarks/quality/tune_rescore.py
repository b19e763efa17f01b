"""Score an interrupted `groundwire eval --tune` run's collections (left in its temp dir) on the
rows that matter, with the queries of each model embedded in one batch (on a loaded machine the
eval's 15 configurations x one forward pass per query did not finish in time).

Run: python benchmarks/quality/tune_rescore.py DATASET PREFIX DISTRACTORS TMPDIR CACHE OUT.json
(how benchmarks/results/tune_subsets.* were scored; see that file).
"""

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from core.cache.query_embedding_cache import QueryEmbeddingCache
from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.embed.cached_embedder import CachedEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.eval.beir import load_beir, subset
from core.eval.metrics import evaluate_run
from core.eval.runner import BASELINE, EVAL_COLLECTION, TUNED_COLLECTION, _run, whole_section_run
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.query_text import normalize_query
from core.tune.collection_embedders import CollectionEmbedders
from server.commands.eval_command import configurations, tuned_configurations
from server.settings import load_settings

dataset_dir, prefix, distractors, tmp, cache, out = (
    sys.argv[1],
    sys.argv[2],
    int(sys.argv[3]),
    Path(sys.argv[4]),
    Path(sys.argv[5]),
    Path(sys.argv[6]),
)
started = time.perf_counter()
dataset = subset(load_beir(Path(dataset_dir)), prefix, distractors)
base = CachedEmbedder(SentenceTransformerEmbedder(default_model_path(), "cpu", 32), cache)
catalog = CollectionCatalog(tmp)
catalog.open_all()
queries_cache = QueryEmbeddingCache(base)
embedders = CollectionEmbedders(
    base,
    lambda p: SentenceTransformerEmbedder(p, "cpu", 32),
    base_queries=queries_cache,
    wrap_queries=queries_cache.for_embedder,
)
tuned = catalog.get(DEFAULT_TENANT, TUNED_COLLECTION)
texts = [normalize_query(t, 100_000) for t in dataset.queries.values()]
embedders.queries(catalog.get(DEFAULT_TENANT, EVAL_COLLECTION)).embed_queries(texts)  # one batch
embedders.queries(tuned).embed_queries(texts)
settings = load_settings()
chosen = {k: v for k, v in configurations(settings).items() if k in ("dense", "default")}
chosen |= tuned_configurations(settings)
results = {BASELINE: evaluate_run(whole_section_run(dataset, base, 10), dataset.qrels, 10)}
with ThreadPoolExecutor(2) as pool:
    pipeline = RetrievalPipeline(catalog, base, pool, query_embedders=embedders.queries)
    for label, template in chosen.items():
        results[label] = evaluate_run(
            _run(pipeline, template, dataset.queries, 10, lambda n: None), dataset.qrels, 10
        )
        print(label, results[label], flush=True)
report = {
    "dataset": dataset_dir,
    "subset": {"prefix": prefix, "distractors": distractors},
    "documents": len(dataset.corpus),
    "queries": len(dataset.queries),
    "device": "cpu",
    "tuned_model": tuned.config.tuned_model,
    "rescore_seconds": round(time.perf_counter() - started, 1),
    "load_average": [round(x, 2) for x in os.getloadavg()],
    "results": results,
}
out.write_text(json.dumps(report, indent=2) + "\n")
print(json.dumps(report, indent=2))
catalog.close()
