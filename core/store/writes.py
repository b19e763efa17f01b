"""Single-statement write helpers used inside `SqliteStore` transactions."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

from core.models import ChunkDraft, Document, chunk_id_for
from core.store import schema
from core.store.records import ChangeOp, ChunkRisk

__all__ = [
    "ChunkRisk",
    "append_change",
    "delete_chunks",
    "finish_change",
    "insert_chunk",
    "replace_sections",
]


def delete_chunks(db: sqlite3.Connection, document_id: str) -> list[int]:
    """Delete a document's chunks; their row ids, ascending."""
    rows = db.execute(
        "DELETE FROM chunks WHERE document_id = ? RETURNING row_id", (document_id,)
    ).fetchall()
    return sorted(int(row[0]) for row in rows)


def replace_sections(
    db: sqlite3.Connection, document_id: str, paths: Sequence[tuple[str, ...]], vectors: np.ndarray
) -> None:
    """Replace a document's section vectors: `vectors` float32 (len(paths), d), row i for paths[i]."""
    db.execute("DELETE FROM sections WHERE document_id = ?", (document_id,))
    db.executemany(
        "INSERT INTO sections (document_id, section_path_json, embedding) VALUES (?, ?, ?)",
        [
            (
                document_id,
                json.dumps(list(path), ensure_ascii=False),
                vector.astype(np.float32, copy=False).tobytes(),
            )
            for path, vector in zip(paths, vectors, strict=True)
        ],
    )


def append_change(db: sqlite3.Connection, op: ChangeOp, document_id: str) -> int:
    """Append a change row (row ids filled in by `finish_change`); its sequence number."""
    cursor = db.execute(
        "INSERT INTO changes (op, document_id, row_ids_json) VALUES (?, ?, '{}')",
        (op, document_id),
    )
    assert cursor.lastrowid is not None
    return int(cursor.lastrowid)


def finish_change(db: sqlite3.Connection, seq: int, added: list[int], removed: list[int]) -> None:
    """Record the added and removed row ids of change `seq`."""
    payload = json.dumps({"added": added, "removed": removed})
    db.execute("UPDATE changes SET row_ids_json = ? WHERE seq = ?", (payload, seq))


def write_document(
    db: sqlite3.Connection, document: Document, content_hash: str, chunk_count: int, seq: int
) -> None:
    """Insert or replace the document row."""
    db.execute(
        "INSERT INTO documents (document_id, content_hash, source_type, source_path, title, "
        "metadata_json, text, chunk_count, updated_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (document_id) DO UPDATE SET content_hash = excluded.content_hash, "
        "source_type = excluded.source_type, source_path = excluded.source_path, "
        "title = excluded.title, metadata_json = excluded.metadata_json, "
        "text = excluded.text, chunk_count = excluded.chunk_count, "
        "updated_seq = excluded.updated_seq",
        (
            document.document_id,
            content_hash,
            document.source_type.value,
            document.source_path,
            document.title,
            schema.dump_metadata(document.metadata),
            document.text,
            chunk_count,
            seq,
        ),
    )


def insert_chunk(
    db: sqlite3.Connection,
    document_id: str,
    ordinal: int,
    draft: ChunkDraft,
    vector: np.ndarray,
    risk: ChunkRisk,
    seq: int,
) -> int:
    """Insert one chunk; its new row id."""
    flags, level = risk
    cursor = db.execute(
        "INSERT INTO chunks (chunk_id, document_id, ordinal, text, section_path_json, "
        "has_code, token_estimate, page, risk_flags_json, risk_level, embedding, seq) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chunk_id_for(document_id, ordinal),
            document_id,
            ordinal,
            draft.text,
            json.dumps(list(draft.section_path), ensure_ascii=False),
            int(draft.has_code),
            draft.token_estimate,
            draft.page,
            json.dumps(list(flags), ensure_ascii=False),
            int(level),
            vector.astype(np.float32, copy=False).tobytes(),
            seq,
        ),
    )
    assert cursor.lastrowid is not None
    return int(cursor.lastrowid)
