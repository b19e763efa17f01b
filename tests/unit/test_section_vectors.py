"""Section vectors in the store of a real collection: stored one per section, replaced with their
document, deleted with it, kept consistent by compaction, crash replay and snapshot restore, and
checked by the store integrity check."""

from __future__ import annotations

import sqlite3
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.compaction import compact
from core.catalog.snapshot import restore_snapshot, take_snapshot
from core.embed.embedding_text import embedding_text
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.indexer import Indexer
from core.models import Document, SourceType
from core.store.integrity import check_store_file
from core.store.records import PreparedDocument, SectionVectors
from tests.unit.collection_support import DIM, open_collection, prepared, run_then_crash
from tests.unit.test_query_embedding_cache import CountingEmbedder

PATHS = (("Guide", "Install"), ("Guide", "Install"), ("Guide", "Usage"))
"""Three chunks in two sections."""


def section_matrix(document_id: str, count: int, version: int = 0) -> np.ndarray:
    """Deterministic unit vectors, float32 (count, DIM), distinct from the chunk vectors."""
    rng = np.random.default_rng(zlib.crc32(f"section:{document_id}:{version}".encode()))
    matrix = rng.standard_normal((count, DIM)).astype(np.float32)
    unit: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return unit


def with_sections(document_id: str, version: int = 0) -> PreparedDocument:
    """A three-chunk document in two sections, with one section vector each."""
    item = prepared(document_id, len(PATHS), version)
    chunks = tuple(
        replace(chunk, section_path=path) for chunk, path in zip(item.chunks, PATHS, strict=True)
    )
    paths = tuple(dict.fromkeys(PATHS))
    sections = SectionVectors(paths, section_matrix(document_id, len(paths), version))
    return replace(item, chunks=chunks, sections=sections)


def section_view(collection: Collection) -> dict[tuple[str, int], list[float]]:
    """(document id, ordinal) of every live chunk -> its section vector (rounded)."""
    ids = [int(i) for batch, _ in collection.store.iter_live_vectors() for i in batch]
    chunks = collection.get_chunks(ids)
    found, vectors = collection.store.get_section_vectors(ids)
    return {
        (chunks[int(i)].document_id, chunks[int(i)].ordinal): np.round(v, 5).tolist()
        for i, v in zip(found, vectors, strict=True)
    }


def expected_view(document_id: str, version: int = 0) -> dict[tuple[str, int], list[float]]:
    matrix = section_matrix(document_id, 2, version)
    return {
        (document_id, ordinal): np.round(matrix[0 if path[1] == "Install" else 1], 5).tolist()
        for ordinal, path in enumerate(PATHS)
    }


@pytest.fixture
def collection(tmp_path: Path) -> Collection:
    opened = open_collection(tmp_path / "data" / "c")
    yield opened
    opened.close()


def test_each_chunk_reads_its_sections_vector(collection: Collection) -> None:
    collection.commit([with_sections("a"), with_sections("b")])
    assert section_view(collection) == {**expected_view("a"), **expected_view("b")}
    rows = sqlite3.connect(collection.store.path).execute("SELECT COUNT(*) FROM sections")
    assert rows.fetchone()[0] == 4  # one per section, not one per chunk
    assert check_store_file(collection.store.path) == []


def test_an_upsert_replaces_the_sections_and_a_delete_removes_them(
    collection: Collection,
) -> None:
    collection.commit([with_sections("a"), with_sections("b")])
    collection.commit([with_sections("a", version=1)])
    assert section_view(collection) == {**expected_view("a", 1), **expected_view("b")}
    collection.delete_documents(["a"])
    assert section_view(collection) == expected_view("b")
    database = sqlite3.connect(collection.store.path)
    assert database.execute("SELECT DISTINCT document_id FROM sections").fetchall() == [("b",)]
    assert check_store_file(collection.store.path) == []


def test_vectors_read_before_an_upsert_or_delete_are_never_served_after_it(
    collection: Collection,
) -> None:
    collection.commit([with_sections("a"), with_sections("b")])
    old = [int(i) for batch, _ in collection.store.iter_live_vectors() for i in batch]
    found, vectors = collection.store.get_section_vectors(old)  # read once: the store keeps them
    assert found.tolist() == sorted(old)
    vectors[:] = 0.0  # the caller's copy: the kept vectors must not change with it
    assert section_view(collection) == {**expected_view("a"), **expected_view("b")}
    collection.commit([with_sections("a", version=1)])
    collection.delete_documents(["b"])
    found, vectors = collection.store.get_section_vectors(old)
    assert found.tolist() == [] and vectors.shape[0] == 0
    assert section_view(collection) == expected_view("a", 1)


def test_documents_without_section_vectors_read_none(collection: Collection) -> None:
    collection.commit([prepared("plain"), with_sections("a")])
    assert section_view(collection) == expected_view("a")
    assert check_store_file(collection.store.path) == []


@pytest.mark.parametrize(
    ("sections", "message"),
    [
        (
            SectionVectors((("Guide", "Install"),), section_matrix("x", 1)),
            "sections name 1 paths; the chunks have 2 distinct section paths and need exactly "
            "one vector each",
        ),
        (
            SectionVectors((("Guide", "Install"), ("Guide", "Usage")), np.ones((2, 3), np.float32)),
            f"section vectors must have shape (2, {DIM}), got (2, 3)",
        ),
    ],
    ids=["a-section-missing", "wrong-width"],
)
def test_the_store_refuses_sections_that_do_not_fit_the_chunks(
    collection: Collection, sections: SectionVectors, message: str
) -> None:
    item = replace(with_sections("a"), sections=sections)
    with pytest.raises(ValueError) as caught:
        collection.commit([item])
    assert str(caught.value) == message
    assert collection.store.get_document("a") is None


def test_compaction_keeps_every_live_sections_vector(collection: Collection) -> None:
    collection.commit([with_sections(name) for name in "abcd"])
    collection.delete_documents(["b"])
    collection.commit([with_sections("c", version=1)])
    before = section_view(collection)
    compact(collection)
    assert section_view(collection) == before
    assert before == {**expected_view("a"), **expected_view("c", 1), **expected_view("d")}
    assert check_store_file(collection.store.path) == []


def test_a_crash_before_the_indexes_caught_up_keeps_sections_consistent(tmp_path: Path) -> None:
    directory = tmp_path / "data" / "c"

    def steps(opened: Collection) -> None:
        opened.commit([with_sections("a"), with_sections("b")])
        item = with_sections("b", version=1)  # the store alone, as a crash leaves it
        opened.store.upsert_document(
            item.document,
            item.content_hash,
            item.chunks,
            item.embeddings,
            item.risks,
            sections=item.sections,
        )

    run_then_crash(directory, steps)
    reopened = open_collection(directory)
    try:
        assert section_view(reopened) == {**expected_view("a"), **expected_view("b", 1)}
        assert check_store_file(reopened.store.path) == []
    finally:
        reopened.close()


def test_a_restored_snapshot_has_the_section_vectors(
    collection: Collection, tmp_path: Path
) -> None:
    collection.commit([with_sections("a"), with_sections("b")])
    info = take_snapshot(collection, tmp_path / "snapshots")
    collection.delete_documents(["a"])
    target = tmp_path / "data" / "restored"
    restore_snapshot(tmp_path / "snapshots", info.snapshot_id, target)
    restored = open_collection(target)
    try:
        assert section_view(restored) == {**expected_view("a"), **expected_view("b")}
        assert check_store_file(restored.store.path) == []
    finally:
        restored.close()


def _damaged(collection: Collection, statement: str) -> list[str]:
    path = collection.store.path
    collection.close()
    database = sqlite3.connect(path)
    with database:
        database.execute(statement)
    database.close()
    return check_store_file(path)


def test_integrity_check_finds_a_chunk_without_its_section(tmp_path: Path) -> None:
    collection = open_collection(tmp_path / "c")
    collection.commit([with_sections("a")])
    problems = _damaged(
        collection, """DELETE FROM sections WHERE section_path_json = '["Guide", "Usage"]'"""
    )
    assert problems == ["chunks without their section vector: row ids [3]"]


def test_integrity_check_finds_a_section_no_chunk_belongs_to(tmp_path: Path) -> None:
    collection = open_collection(tmp_path / "c")
    collection.commit([with_sections("a")])
    blob = np.zeros(DIM, np.float32).tobytes()
    problems = _damaged(
        collection,
        f"""INSERT INTO sections VALUES ('a', '["Gone"]', x'{blob.hex()}')""",
    )
    assert problems == ["section vectors no chunk belongs to: [('a', '[\"Gone\"]')]"]


def test_integrity_check_finds_a_section_vector_of_another_width(tmp_path: Path) -> None:
    collection = open_collection(tmp_path / "c")
    collection.commit([with_sections("a")])
    problems = _damaged(
        collection,
        """UPDATE sections SET embedding = x'00000000' WHERE section_path_json = '["Guide", "Usage"]'""",
    )
    assert problems == [f"stored vectors differ in width: [4, {4 * DIM}] bytes"]


GUIDE = """# Guide

## Install

Run the installer and follow its prompts; it asks for a target directory.

## Usage

Start the program from a terminal. It reads its settings from a file in your home directory.
Pass --verbose to see what it does. Pass --dry-run to see what it would do without doing it.
"""


def test_the_indexer_stores_one_vector_per_section_and_reuses_one_chunk_sections(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    counting = CountingEmbedder(embedder)
    catalog = CollectionCatalog(tmp_path)
    catalog.open_all()
    config = CollectionConfig(
        embedding_model=embedder.model_name, embedding_dim=embedder.dimension, chunk_max_tokens=32
    )
    collection = catalog.create(DEFAULT_TENANT, "guide", config)
    try:
        Indexer(counting, 32, max_document_bytes=1 << 20).index(
            collection, [Document("guide", GUIDE, SourceType.MARKDOWN)]
        )
        stored = collection.store.get_document("guide")
        assert stored is not None
        paths = [c.section_path for c in stored.chunks]
        assert paths.count(("Guide", "Install")) == 1 and paths.count(("Guide", "Usage")) > 1
        ids, vectors = collection.store.get_section_vectors([c.row_id for c in stored.chunks])
        assert ids.tolist() == [c.row_id for c in stored.chunks]
        by_path = {c.section_path: v for c, v in zip(stored.chunks, vectors, strict=True)}
        usage = [c for c in stored.chunks if c.section_path == ("Guide", "Usage")]
        whole = embedding_text(("Guide", "Usage"), "\n".join(c.text for c in usage))
        assert counting.document_batches[1] == [whole]  # the one-chunk section is not re-embedded
        np.testing.assert_allclose(
            by_path[("Guide", "Usage")], embedder.embed_documents([whole])[0], atol=1e-5
        )
        install = next(c for c in stored.chunks if c.section_path == ("Guide", "Install"))
        _, chunk_vector = collection.store.get_vectors([install.row_id])
        np.testing.assert_array_equal(by_path[("Guide", "Install")], chunk_vector[0])
        assert check_store_file(collection.store.path) == []
    finally:
        catalog.close()
