"""The retrieval pipeline reads full chunks only for the fused entries that can become hits
(`_hit_chunks`): in fused order, above the score threshold, and never a chunk deleted after
the filter stage admitted it (the next admitted entry takes its place)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.catalog.collection import Collection
from core.retrieve.pipeline import _hit_chunks
from tests.unit.collection_support import open_collection, prepared

Rows = tuple[Collection, list[int], list[int]]


@pytest.fixture
def two_documents(tmp_path: Path) -> Iterator[Rows]:
    """A collection holding documents "a" and "b", with the row ids of each one's chunks."""
    collection = open_collection(tmp_path / "c")
    try:
        collection.commit([prepared("a"), prepared("b")])
        yield collection, _rows(collection, "a"), _rows(collection, "b")
    finally:
        collection.close()


def _rows(collection: Collection, document_id: str) -> list[int]:
    stored = collection.store.get_document(document_id)
    assert stored is not None
    return [chunk.row_id for chunk in stored.chunks]


def test_hit_chunks_follow_the_fused_order_and_the_threshold(two_documents: Rows) -> None:
    collection, a, b = two_documents
    fused = [(b[0], 0.9), (a[0], 0.8), (b[1], 0.7), (a[1], 0.6), (a[2], 0.1)]
    admitted = dict.fromkeys([b[0], b[1], a[1], a[2]])  # a[0] was not admitted
    chunks = _hit_chunks(collection, fused, admitted, 2, None)
    assert list(chunks) == [b[0], b[1]]
    assert {c.document_id for c in chunks.values()} == {"b"}
    assert list(_hit_chunks(collection, fused, admitted, 10, 0.5)) == [b[0], b[1], a[1]]
    read = collection.get_chunks([a[1]])  # a chunk the filter stage read is reused
    reused = _hit_chunks(collection, fused, {a[1]: read[a[1]]}, 1, None)
    assert reused[a[1]] is read[a[1]]


def test_a_chunk_deleted_after_admission_is_skipped_for_the_next(two_documents: Rows) -> None:
    collection, a, b = two_documents
    fused = [(a[0], 0.9), (b[0], 0.8), (a[1], 0.7), (b[1], 0.6), (b[2], 0.5)]
    admitted = dict.fromkeys(row for row, _ in fused)
    collection.delete_documents(["a"])  # between the filter stage and the hits
    chunks = _hit_chunks(collection, fused, admitted, 3, None)
    assert list(chunks) == [b[0], b[1], b[2]]
    assert _hit_chunks(collection, fused, admitted, 5, None).keys() == set(b)
