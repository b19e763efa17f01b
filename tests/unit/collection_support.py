"""Building real collections on disk for the catalog tests: deterministic documents and vectors
written the way `core.indexer.Indexer` writes them (store commit, then mirror, then commit)."""

from __future__ import annotations

import gc
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.catalog.collection import Collection, DensePersistPolicy
from core.catalog.collection_config import CollectionConfig
from core.dense.spec import DenseIndexSpec
from core.models import ChunkDraft, Document, SourceType
from core.store.records import LexicalRow, UpsertResult

DIM = 16
MARKER = "alpha"
"""A word every chunk contains, so a lexical search for it lists every indexed row."""
NEVER_SAVE = DensePersistPolicy(max_changes=1_000_000, max_interval_s=1e9)
WORDS = ("river", "mountain", "compiler", "garden", "violin", "harbor", "quartz", "lantern")
SPECS = {
    "flat": DenseIndexSpec(),
    "hnsw": DenseIndexSpec(kind="hnsw", hnsw_m=8, hnsw_ef_construction=40, hnsw_ef_search=64),
    "ivf_flat": DenseIndexSpec(kind="ivf_flat", ivf_nlist=2, ivf_nprobe=2),
}


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


def store_only(
    collection: Collection, document_id: str, count: int = 3, version: int = 0
) -> UpsertResult:
    """Commit a document to the store without mirroring it (a crash right after the commit)."""
    texts = chunk_texts(document_id, count, version)
    document = Document(
        document_id=document_id,
        text="\n\n".join(texts),
        source_type=SourceType.TEXT,
        title=f"Doc {document_id}",
    )
    drafts = [ChunkDraft(text, (), False, 5, 0) for text in texts]
    return collection.store.upsert_document(
        document, document.content_hash(), drafts, vectors_for(document_id, count, version)
    )


def write(collection: Collection, document_id: str, count: int = 3, version: int = 0) -> int:
    """Upsert one document like the indexer does (lexical committed, dense saved per policy)."""
    with collection.write_lock:
        result = store_only(collection, document_id, count, version)
        rows = [
            LexicalRow(row_id, text, f"Doc {document_id}", "")
            for row_id, text in zip(
                result.added_row_ids, chunk_texts(document_id, count, version), strict=True
            )
        ]
        collection.apply_upsert(
            result.added_row_ids,
            vectors_for(document_id, count, version),
            result.removed_row_ids,
            rows,
        )
        collection.commit_indexes(result.seq, persist_dense=False)
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
