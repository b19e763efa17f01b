"""Dense document scoring at more than one granularity, on a BEIR set, exact search in numpy.

Every corpus document is chunked exactly as the indexer does (structure chunker, 200 tokens,
title as the section root) and each chunk embedded as `embedding_text(path, text)`; the whole
section is embedded as `title + "\\n" + text` (the model keeps its first 256 tokens: the plain
vector store's one vector per section). Rules compared, each ranking documents for every query:
the whole-section vector alone, the best chunk, best chunk blended with the section vector, and
chunk vectors mixed with their section's lead (first chunk) vector.

Run: python benchmarks/quality/granularity_sweep.py --dataset DIR --embedding-cache FILE
(the cache is shared with `groundwire eval`, so neither re-embeds what the other did).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.embed.cached_embedder import CachedEmbedder
from core.embed.embedding_text import embedding_text
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.eval.beir import load_beir, subset
from core.eval.metrics import evaluate_run
from core.ingest.chunking_spec import ChunkingSpec
from core.ingest.document_chunker import chunk_any
from core.models import Document, SourceType
from core.retrieve.query_text import normalize_query


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--embedding-cache", type=Path, required=True)
    parser.add_argument("--save", type=Path, help="write the vectors here (npz)")
    parser.add_argument(
        "--subset",
        help="keep only documents whose id starts with this (e.g. the FAQ pages) plus "
        "--distractors others drawn at random (seed 0): a quick run on a shared machine",
    )
    parser.add_argument("--distractors", type=int, default=0)
    args = parser.parse_args()
    data = load_beir(args.dataset)
    if args.subset:
        data = subset(data, args.subset, args.distractors)
    embedder = CachedEmbedder(
        SentenceTransformerEmbedder(default_model_path(), "cpu", 32), args.embedding_cache
    )
    spec = ChunkingSpec(max_tokens=200)
    doc_ids = list(data.corpus)
    chunk_doc: list[int] = []
    chunk_section: list[int] = []
    texts: list[str] = []
    section_first: dict[tuple[int, tuple[str, ...]], int] = {}
    for d, doc_id in enumerate(doc_ids):
        doc = data.corpus[doc_id]
        drafts = chunk_any(
            Document(doc_id, doc.text, SourceType.TEXT, title=doc.title),
            b"",
            spec,
            embedder.count_tokens,
        )
        for c in drafts:
            path = c.draft.section_path
            if doc.title and path[:1] != (doc.title,):
                path = (doc.title, *path)
            key = (d, path)
            section_first.setdefault(key, len(texts))
            chunk_section.append(section_first[key])
            chunk_doc.append(d)
            texts.append(embedding_text(path, c.draft.text))
    print(f"{len(doc_ids)} documents, {len(texts)} chunks", flush=True)
    chunks = batched(embedder.embed_documents, texts)
    sections = batched(
        embedder.embed_documents,
        [f"{data.corpus[i].title}\n{data.corpus[i].text}" for i in doc_ids],
    )
    query_ids = list(data.queries)
    queries = embedder.embed_queries([normalize_query(data.queries[q], 100_000) for q in query_ids])
    if args.save:
        np.savez(
            args.save,
            chunks=chunks,
            sections=sections,
            queries=queries,
            chunk_doc=np.array(chunk_doc),
            chunk_section=np.array(chunk_section),
        )
    report(data, doc_ids, query_ids, chunks, sections, queries, chunk_doc, chunk_section)


def batched(embed: Callable[[list[str]], np.ndarray], texts: list[str]) -> np.ndarray:
    out = []
    for start in range(0, len(texts), 256):
        out.append(embed(texts[start : start + 256]))
        print(f"  embedded {start + len(out[-1])}/{len(texts)}", flush=True)
    return np.concatenate(out)


def normalized(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def report(data, doc_ids, query_ids, chunks, sections, queries, chunk_doc, chunk_section) -> None:  # type: ignore[no-untyped-def]
    chunk_doc_a = np.asarray(chunk_doc)
    lead = chunks[np.asarray(chunk_section)]
    section_of_chunk = sections[chunk_doc_a]
    n_docs = len(doc_ids)

    def best_chunk(vectors: np.ndarray) -> np.ndarray:
        s = queries @ vectors.T
        out = np.full((len(queries), n_docs), -np.inf, dtype=np.float32)
        for q in range(len(queries)):
            np.maximum.at(out[q], chunk_doc_a, s[q])
        return out

    rules: dict[str, np.ndarray] = {}
    rules["whole section (baseline)"] = queries @ sections.T
    rules["best chunk (old dense)"] = best_chunk(chunks)
    for w in (0.5, 1.0, 2.0):
        rules[f"chunk+lead blend w={w}"] = best_chunk(normalized(chunks + w * lead))
        rules[f"chunk+section blend w={w}"] = best_chunk(normalized(chunks + w * section_of_chunk))
    for b in (0.5, 1.0, 2.0):
        rules[f"best chunk + {b}*section score"] = (
            rules["best chunk (old dense)"] + b * rules["whole section (baseline)"]
        ) / (1 + b)
    count = np.bincount(chunk_doc_a, minlength=n_docs)
    rules["best chunk, many-chunk penalty 0.02*log(n)"] = rules[
        "best chunk (old dense)"
    ] - 0.02 * np.log(count)
    results = {}
    for name, scores in rules.items():
        run = {}
        for q, qid in enumerate(query_ids):
            top = np.argsort(-scores[q])[:10]
            run[qid] = [doc_ids[i] for i in top]
        results[name] = evaluate_run(run, data.qrels, 10)
    base = results["whole section (baseline)"]
    for name, m in results.items():
        print(
            f"{name:<48} MRR@10 {m['mrr@10']:.3f} ({m['mrr@10'] - base['mrr@10']:+.3f})"
            f"  R@10 {m['recall@10']:.3f} ({m['recall@10'] - base['recall@10']:+.3f})"
        )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
