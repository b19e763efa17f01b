"""SQLite schema of a collection database and the conversions between rows and domain objects."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence

import numpy as np

from core.models import Chunk, RiskLevel, SourceType
from core.store.records import Change, LexicalRow, StoredDocument

SCHEMA_VERSION = "1"

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=FULL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=10000",
)

DDL = """
CREATE TABLE IF NOT EXISTS documents (
    document_id   TEXT PRIMARY KEY,
    content_hash  TEXT NOT NULL,
    source_type   TEXT NOT NULL,
    source_path   TEXT NOT NULL,
    title         TEXT NOT NULL,
    metadata_json TEXT NOT NULL,
    text          TEXT NOT NULL,
    chunk_count   INTEGER NOT NULL,
    updated_seq   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    row_id            INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id          TEXT NOT NULL UNIQUE,
    document_id       TEXT NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
    ordinal           INTEGER NOT NULL,
    text              TEXT NOT NULL,
    section_path_json TEXT NOT NULL,
    has_code          INTEGER NOT NULL,
    token_estimate    INTEGER NOT NULL,
    page              INTEGER NOT NULL,
    risk_flags_json   TEXT NOT NULL,
    risk_level        INTEGER NOT NULL,
    embedding         BLOB NOT NULL,
    seq               INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks(document_id, ordinal);
-- One vector per section of a document (heading path + lead text embedded whole, see
-- core/embed/section_vectors.py); a chunk's section is the row with its section_path_json.
-- Documents written before section vectors existed have none.
CREATE TABLE IF NOT EXISTS sections (
    document_id       TEXT NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
    section_path_json TEXT NOT NULL,
    embedding         BLOB NOT NULL,
    PRIMARY KEY (document_id, section_path_json)
);
CREATE TABLE IF NOT EXISTS changes (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    op           TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    document_id  TEXT NOT NULL,
    row_ids_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- Link graph (see link_graph.py): keys a link target is matched on (rank 0 source path,
-- 1 document id, 2 and 3 the same without document suffix), each chunk's internal links, and
-- the section anchor slugs each chunk is reachable by. Edges are resolved when read.
CREATE TABLE IF NOT EXISTS document_keys (
    document_id TEXT NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
    rank        INTEGER NOT NULL,
    key         TEXT NOT NULL,
    PRIMARY KEY (document_id, rank)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS document_keys_by_key ON document_keys(key, rank);
CREATE TABLE IF NOT EXISTS chunk_links (
    row_id   INTEGER NOT NULL REFERENCES chunks(row_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    target   TEXT NOT NULL,
    fragment TEXT NOT NULL,
    PRIMARY KEY (row_id, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunk_anchors (
    row_id      INTEGER NOT NULL REFERENCES chunks(row_id) ON DELETE CASCADE,
    document_id TEXT NOT NULL,
    ordinal     INTEGER NOT NULL,
    slug        TEXT NOT NULL,
    PRIMARY KEY (row_id, slug)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS chunk_anchors_by_slug ON chunk_anchors(document_id, slug, ordinal);
"""

CHUNK_COLUMNS = (
    "c.row_id, c.chunk_id, c.document_id, c.ordinal, c.text, c.section_path_json, c.has_code, "
    "c.token_estimate, c.page, c.risk_flags_json, c.risk_level, "
    "d.source_type, d.source_path, d.title, d.metadata_json"
)
CHUNK_SELECT = f"SELECT {CHUNK_COLUMNS} FROM chunks c JOIN documents d USING (document_id)"

SECTION_SEPARATOR = " / "


def create_schema(connection: sqlite3.Connection) -> None:
    """Create missing tables and stamp the schema version (idempotent)."""
    connection.executescript(DDL)
    connection.execute(
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
    )


def dump_metadata(metadata: Mapping[str, str]) -> str:
    """Canonical JSON of a metadata mapping (sorted keys)."""
    return json.dumps({key: metadata[key] for key in sorted(metadata)}, ensure_ascii=False)


def load_metadata(raw: str) -> dict[str, str]:
    """Inverse of `dump_metadata`."""
    loaded: dict[str, str] = json.loads(raw)
    return loaded


def load_strings(raw: str) -> tuple[str, ...]:
    """A JSON list of strings as a tuple."""
    if raw == "[]":  # most chunks have no risk flags: skip the JSON parser
        return ()
    return tuple(str(item) for item in json.loads(raw))


_SOURCE_TYPES = {member.value: member for member in SourceType}
RISK_LEVELS = {int(member): member for member in RiskLevel}


def chunk_from_row(row: sqlite3.Row) -> Chunk:
    """Build a `Chunk` from a row selected with `CHUNK_SELECT` (columns in `CHUNK_COLUMNS` order).

    On the query path for every candidate, so it unpacks by position, skips the JSON parser for
    empty lists and mappings and looks enums up in dicts (sqlite returns the declared types).
    """
    (
        row_id,
        chunk_id,
        document_id,
        ordinal,
        text,
        section_path_json,
        has_code,
        token_estimate,
        page,
        risk_flags_json,
        risk_level,
        source_type,
        source_path,
        title,
        metadata_json,
    ) = row
    return Chunk(
        row_id=row_id,
        chunk_id=chunk_id,
        document_id=document_id,
        ordinal=ordinal,
        text=text,
        section_path=load_strings(section_path_json),
        has_code=bool(has_code),
        token_estimate=token_estimate,
        source_type=_SOURCE_TYPES[source_type],
        source_path=source_path,
        page=page,
        title=title,
        metadata={} if metadata_json == "{}" else load_metadata(metadata_json),
        risk_flags=load_strings(risk_flags_json),
        risk_level=RISK_LEVELS[risk_level],
    )


def document_from_rows(document: sqlite3.Row, chunks: Sequence[sqlite3.Row]) -> StoredDocument:
    """Build a `StoredDocument` from its `documents` row and its chunk rows (`CHUNK_SELECT`)."""
    return StoredDocument(
        document_id=str(document["document_id"]),
        text=str(document["text"]),
        source_type=SourceType(document["source_type"]),
        source_path=str(document["source_path"]),
        title=str(document["title"]),
        metadata=load_metadata(document["metadata_json"]),
        content_hash=str(document["content_hash"]),
        updated_seq=int(document["updated_seq"]),
        chunks=[chunk_from_row(row) for row in chunks],
    )


def change_from_row(row: sqlite3.Row) -> Change:
    """Build a `Change` from a `changes` row."""
    ids = json.loads(row["row_ids_json"])
    return Change(
        seq=int(row["seq"]),
        op=row["op"],
        document_id=str(row["document_id"]),
        added_row_ids=tuple(int(i) for i in ids.get("added", ())),
        removed_row_ids=tuple(int(i) for i in ids.get("removed", ())),
    )


def lexical_row(row: sqlite3.Row) -> LexicalRow:
    """Build a `LexicalRow` from a row with row_id, text, section_path_json and title."""
    return LexicalRow(
        row_id=int(row["row_id"]),
        text=str(row["text"]),
        title=str(row["title"]),
        section=SECTION_SEPARATOR.join(load_strings(row["section_path_json"])),
    )


def vectors_from_blobs(blobs: Sequence[bytes], dimension: int = 0) -> np.ndarray:
    """Stack float32 blobs into a float32 array of shape (len(blobs), d).

    d is inferred from the first blob; `dimension` is used only when `blobs` is empty.
    """
    if not blobs:
        return np.zeros((0, dimension), dtype=np.float32)
    flat = np.frombuffer(b"".join(blobs), dtype=np.float32)
    return flat.reshape(len(blobs), len(blobs[0]) // 4).copy()
