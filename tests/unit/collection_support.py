"""Building real collections on disk for the catalog tests: deterministic documents and vectors
committed the way `core.indexer.Indexer` has them committed (`Collection.commit`), or written to
the store alone to stand for a crash before the derived indexes caught up."""

from __future__ import annotations

import gc
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.catalog.collection import Collection, DensePersistPolicy
from core.catalog.collection_config import CollectionConfig
from core.dense.spec import DenseIndexSpec
from core.models import ChunkDraft, Document, RiskLevel, SourceType
from core.store.records import PreparedDocument, UpsertResult

DIM = 16
MARKER = "alpha"
"""A word every chunk contains, so a lexical search for it lists every indexed row."""
NEVER_SAVE = DensePersistPolicy(max_changes=1_000_000, max_interval_s=1e9)
WORDS = ("river", "mountain", "compiler", "garden", "violin", "harbor", "quartz", "lantern")
AUTO_THRESHOLD = 40
SPECS = {
    "flat": DenseIndexSpec(kind="flat"),
    "hnsw": DenseIndexSpec(kind="hnsw", hnsw_m=8, hnsw_ef_construction=40, hnsw_ef_search=64),
    "ivf_flat": DenseIndexSpec(kind="ivf_flat", ivf_nlist=2, ivf_nprobe=2),
    "auto": DenseIndexSpec(kind="auto", auto_graph_threshold=AUTO_THRESHOLD, hnsw_m=8),
}
"""Specs by name; "auto" turns into a graph past `AUTO_THRESHOLD` vectors (a dozen documents)."""


def open_collection(
    directory: Path, kind: str = "flat", policy: DensePersistPolicy = NEVER_SAVE
) -> Collection:
    """Open (creating when new) a collection of DIM-wide vectors with the given index kind."""
    config = CollectionConfig(dense=SPECS[kind], embedding_dim=DIM, embedding_model="test")
    return Collection.open(directory.name, directory, config, persist_policy=policy)


def chunk_texts(document_id: str, count: int, version: int) -> list[str]:
    """Chunk bodies: the marker, a per-document codeword and two vocabulary words."""
    seed = zlib.crc32(f"{document_id}:{version}".encode())
    return [
        f"{MARKER} zq{document_id}v{version} {WORDS[(seed + i) % 8]} {WORDS[(seed * 3 + i) % 8]}"
        for i in range(count)
    ]


def vectors_for(document_id: str, count: int, version: int) -> np.ndarray:
    """Deterministic unit vectors, float32 (count, DIM)."""
    rng = np.random.default_rng(zlib.crc32(f"{document_id}:{version}".encode()))
    matrix = rng.standard_normal((count, DIM)).astype(np.float32)
    unit: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return unit


def prepared(document_id: str, count: int = 3, version: int = 0) -> PreparedDocument:
    """A document of `count` chunks ready to commit (no links)."""
    texts = chunk_texts(document_id, count, version)
    document = Document(
        document_id=document_id,
        text="\n\n".join(texts),
        source_type=SourceType.TEXT,
        title=f"Doc {document_id}",
    )
    return PreparedDocument(
        document=document,
        content_hash=document.content_hash(),
        chunks=tuple(ChunkDraft(text, (), False, 5, 0) for text in texts),
        embeddings=vectors_for(document_id, count, version),
        risks=tuple(((), RiskLevel.NONE) for _ in texts),
    )


def store_only(
    collection: Collection, document_id: str, count: int = 3, version: int = 0
) -> UpsertResult:
    """Write a document to the store alone, as a crash right after the store commit leaves it."""
    item = prepared(document_id, count, version)
    return collection.store.upsert_document(
        item.document, item.content_hash, item.chunks, item.embeddings, item.risks
    )


def write(collection: Collection, document_id: str, count: int = 3, version: int = 0) -> int:
    """Commit one document through `Collection.commit` (lexical committed, dense per policy)."""
    (result,) = collection.commit([prepared(document_id, count, version)])
    assert result is not None, f"{document_id} v{version} was already stored"
    return result.seq


def run_then_crash(
    directory: Path,
    steps: Callable[[Collection], object],
    kind: str = "flat",
    policy: DensePersistPolicy = NEVER_SAVE,
) -> None:
    """Open the collection, run `steps`, then drop it unclosed as kill -9 would: the dense
    index is not saved again and uncommitted lexical changes are lost."""
    collection = open_collection(directory, kind, policy)
    steps(collection)
    del collection
    gc.collect()


def store_row_ids(collection: Collection) -> set[int]:
    """Row ids of every live chunk in the store."""
    return {int(i) for ids, _ in collection.store.iter_live_vectors() for i in ids}


def dense_row_ids(collection: Collection, bound: int = 4096) -> set[int]:
    """Row ids the dense index can return (exact scan over ids 1..bound)."""
    query = np.ones((1, DIM), dtype=np.float32) / np.sqrt(DIM)
    allowed = np.arange(1, bound + 1, dtype=np.int64)
    _, ids = collection.dense_search(query, bound, allowed)
    return {int(i) for i in ids[0] if i >= 0}


def lexical_row_ids(collection: Collection) -> set[int]:
    """Row ids the lexical index can return (every chunk holds MARKER)."""
    return {row_id for row_id, _ in collection.lexical_search(MARKER, 100_000)}


def query_vectors(count: int = 6, seed: int = 7) -> np.ndarray:
    """Unit query vectors, float32 (count, DIM)."""
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, DIM)).astype(np.float32)
    unit: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return unit


def dense_results(collection: Collection, k: int = 5) -> list[list[int]]:
    """Top-k row ids for `query_vectors()`."""
    _, ids = collection.dense_search(query_vectors(), k)
    return [[int(i) for i in row if i >= 0] for row in ids]


def exact_results(collection: Collection, k: int = 5) -> list[list[int]]:
    """Top-k row ids for `query_vectors()` by brute force over the store's live vectors."""
    batches = list(collection.store.iter_live_vectors())
    ids = np.concatenate([b[0] for b in batches])
    matrix = np.concatenate([b[1] for b in batches])
    scores = query_vectors() @ matrix.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return [[int(ids[j]) for j in row] for row in order]


def lexical_matches(collection: Collection) -> list[set[int]]:
    """Every matching row id for one query per vocabulary word (rank order aside: BM25
    statistics count deleted documents until their segments merge)."""
    return [{row_id for row_id, _ in collection.lexical_search(word, 100_000)} for word in WORDS]
