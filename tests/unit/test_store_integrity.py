"""`core.store.integrity`: sound stores pass despite SQLite 3.40.1's false reports; real
corruption of every kind checked is found."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from core.ingest.link_rows import document_link_rows
from core.models import ChunkDraft, Document, SourceType
from core.store.integrity import check_store_file
from core.store.sqlite_store import SqliteStore

LINKED = "# Guide\n\nSee [setup](setup.md#install).\n\n## Install\n\nRun the installer."


def _store(tmp_path: Path) -> Path:
    """A real store with documents, chunks, links and anchors (WITHOUT ROWID rows)."""
    path = tmp_path / "store.sqlite3"
    with SqliteStore.open(path) as store:
        for document_id, sections in (("guide.md", ("Guide",)), ("setup.md", ("Setup", "Install"))):
            document = Document(document_id, LINKED, SourceType.MARKDOWN, source_path=document_id)
            drafts = [
                ChunkDraft("See [setup](setup.md#install).", section_path=sections[:1]),
                ChunkDraft("Run the installer.", section_path=sections),
            ]
            vectors = np.ones((2, 4), dtype=np.float32)
            links = document_link_rows(document, drafts)
            store.upsert_document(document, document.content_hash(), drafts, vectors, links=links)
        store.delete_documents(["guide.md"])
        guide = Document("guide.md", LINKED, SourceType.MARKDOWN, source_path="guide.md")
        drafts = [ChunkDraft("See [setup](setup.md#install).", section_path=("Guide", "Install"))]
        links = document_link_rows(guide, drafts)
        store.upsert_document(guide, "h", drafts, np.ones((1, 4), np.float32), links=links)
    return path


def _edit(path: Path, *statements: str) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in statements:
            connection.execute(statement)
    finally:
        connection.close()


def test_a_sound_store_passes(tmp_path: Path) -> None:
    path = _store(tmp_path)
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("SELECT COUNT(*) FROM chunk_anchors").fetchone()[0] > 0
        raw = [row[0] for row in connection.execute("PRAGMA integrity_check")]
    finally:
        connection.close()
    if sqlite3.sqlite_version == "3.40.1":  # the bug this check exists for
        assert "NULL value in chunk_anchors.document_id" in raw
    assert check_store_file(path) == []


def _schema_edit(table: str, old: str, new: str) -> tuple[str, ...]:
    return (
        "PRAGMA writable_schema=ON",
        f"UPDATE sqlite_schema SET sql = replace(sql, '{old}', '{new}') WHERE name = '{table}'",
        "PRAGMA writable_schema=OFF",
    )


def _null_in_without_rowid_table(path: Path) -> None:
    """A real NULL in chunk_anchors.document_id: the message the filter knows, but true."""
    loosen = _schema_edit("chunk_anchors", "document_id TEXT NOT NULL", "document_id TEXT")
    _edit(path, *loosen)
    _edit(path, "UPDATE chunk_anchors SET document_id = NULL")
    tighten = _schema_edit("chunk_anchors", "document_id TEXT,", "document_id TEXT NOT NULL,")
    _edit(path, *tighten)


CORRUPTIONS: dict[str, tuple[Callable[[Path], None], str]] = {
    "index-out-of-step": (
        lambda p: _edit(p, *_schema_edit("chunks_by_document", "(document_id, ordinal)", "(text)")),
        "chunks_by_document",
    ),
    "real-null-without-rowid": (_null_in_without_rowid_table, "NULL value in chunk_anchors"),
    "orphan-chunks": (
        lambda p: _edit(
            p, "PRAGMA foreign_keys=OFF", "DELETE FROM documents WHERE document_id = 'setup.md'"
        ),
        "chunks without their document",
    ),
    "chunk-count": (
        lambda p: _edit(p, "UPDATE documents SET chunk_count = 5 WHERE document_id = 'setup.md'"),
        "document 'setup.md' records 5 chunks; the store holds 2 with ordinals 0..1",
    ),
    "row-past-sequence": (
        lambda p: _edit(p, "UPDATE chunks SET seq = 99 WHERE ordinal = 0"),
        "a chunk row is at sequence 99, past the store's 4",
    ),
    "foreign-key": (
        lambda p: _edit(
            p, "PRAGMA foreign_keys=OFF", "DELETE FROM chunks WHERE document_id = 'guide.md'"
        ),
        "foreign key violation: chunk_links",
    ),
}


@pytest.mark.parametrize("kind", list(CORRUPTIONS), ids=list(CORRUPTIONS))
def test_real_corruption_is_reported(tmp_path: Path, kind: str) -> None:
    path = _store(tmp_path)
    corrupt, expected = CORRUPTIONS[kind]
    corrupt(path)
    problems = check_store_file(path)
    assert any(expected in problem for problem in problems), problems
