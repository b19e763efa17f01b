"""One contract for every storage backend (local SQLite + FAISS + Tantivy, Milvus): what a
collection stores, replaces, deletes and finds, checked against exact references."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.storage_backend import StorageBackend
from core.retrieve.filters import ChunkFilter
from tests.unit.collection_support import DIM, MARKER, prepared

CONFIG = CollectionConfig(embedding_dim=DIM, embedding_model="test")


@pytest.fixture
def collection(
    tmp_path: Path, storage_backend: Callable[[], StorageBackend]
) -> Iterator[Collection]:
    backend = storage_backend()
    opened = backend.open("default", "docs", tmp_path / "docs", CONFIG, "cpu")
    yield opened
    opened.close()
    backend.close()


def _live(collection: Collection) -> tuple[np.ndarray, np.ndarray]:
    batches = list(collection.store.iter_live_vectors())
    ids = np.concatenate([b[0] for b in batches]) if batches else np.zeros(0, np.int64)
    vectors = np.concatenate([b[1] for b in batches]) if batches else np.zeros((0, DIM))
    return ids, vectors


def test_upserts_replace_and_deletes_remove_with_a_new_version_each(
    collection: Collection,
) -> None:
    start = collection.version()
    first = collection.commit([prepared("a", 3), prepared("b", 2)])
    assert all(r is not None for r in first)
    written = collection.version()
    assert written != start and collection.store.counts() == (2, 5)
    assert collection.commit([prepared("a", 3)]) == [None]  # same content hash: a no-op
    assert collection.version() == written
    old = first[0]
    assert old is not None
    (replaced,) = collection.commit([prepared("a", 2, version=1)])
    assert replaced is not None and sorted(replaced.removed_row_ids) == sorted(old.added_row_ids)
    assert collection.version() != written
    assert collection.get_chunks(list(old.added_row_ids)) == {}
    document = collection.store.get_document("a")
    assert document is not None and [c.ordinal for c in document.chunks] == [0, 1]
    assert [c.row_id for c in document.chunks] == list(replaced.added_row_ids)
    assert document.text == prepared("a", 2, version=1).document.text
    assert collection.store.document_hash("a") == prepared("a", 2, version=1).content_hash
    before_delete = collection.version()
    deleted = collection.delete_documents(["b", "missing"])
    assert deleted.deleted == ("b",) and deleted.not_found == ("missing",)
    assert collection.version() != before_delete
    assert collection.store.get_document("b") is None and collection.store.counts() == (1, 2)
    ids, _ = _live(collection)
    assert sorted(ids.tolist()) == sorted(replaced.added_row_ids)


def test_dense_search_agrees_with_the_exact_reference(collection: Collection) -> None:
    collection.commit([prepared(f"d{i}", 4) for i in range(12)])
    collection.delete_documents(["d3", "d7"])
    ids, vectors = _live(collection)
    rng = np.random.default_rng(7)
    queries = rng.standard_normal((5, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    for query in queries:
        scores, found = collection.dense_search(query[None, :], 10)
        exact = vectors @ query
        order = np.argsort(-exact)[:10]
        assert found[0].tolist() == ids[order].tolist()
        np.testing.assert_allclose(scores[0], exact[order], rtol=1e-4, atol=1e-5)
        allowed = ids[::3]
        sub_scores, sub_found = collection.dense_search(query[None, :], 4, allowed)
        sub_exact = vectors[::3] @ query
        assert sub_found[0].tolist() == allowed[np.argsort(-sub_exact)[:4]].tolist()
        assert list(sub_scores[0]) == sorted(sub_scores[0], reverse=True)


def test_bm25_finds_live_rows_only_best_first(collection: Collection) -> None:
    results = collection.commit([prepared(f"d{i}", 3) for i in range(6)])
    collection.delete_documents(["d2"])
    everything = collection.lexical_search(MARKER, 100)
    ids, _ = _live(collection)
    assert sorted(rid for rid, _ in everything) == sorted(ids.tolist())
    scores = [score for _, score in everything]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    codeword = collection.lexical_search("zqd4v0", 10)
    d4 = results[4]
    assert d4 is not None and sorted(rid for rid, _ in codeword) == sorted(d4.added_row_ids)
    assert collection.lexical_search("zqd2v0", 10) == []
    assert collection.lexical_search('") or ("', 10) == []  # punctuation only: no terms


def test_a_filtered_scan_holds_every_admitted_chunk(collection: Collection) -> None:
    collection.commit([prepared(f"d{i}", 2) for i in range(5)])
    wanted = ChunkFilter(document_ids=frozenset({"d1", "d4"}))
    scanned = [c for batch in collection.scan_chunks(wanted) for c in batch]
    admitted = {c.chunk_id for c in scanned if wanted.matches(c)}
    assert admitted == {"d1#0", "d1#1", "d4#0", "d4#1"}
