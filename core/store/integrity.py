"""Integrity of a collection database: SQLite's own check plus the store's invariants.

`PRAGMA integrity_check` of SQLite 3.40.1 (this machine's) falsely reports
`NULL value in <table>.<column>` for NOT NULL non-key columns of WITHOUT ROWID tables
(`chunk_anchors.document_id` and its siblings; SQLite 3.51 reports `ok` on the same files). Such a
message is dropped only when the table is WITHOUT ROWID, the column is a declared NOT NULL
non-key column, and a direct query finds no NULL in it; every other message is a problem.
On top of that: foreign keys, every chunk's document exists, each document's recorded chunk
count and ordinals match its chunks, and no row or change is ahead of the store's sequence; section
vectors: a document has none (written before they existed) or one for each of its chunks' section
paths and no other, each as wide as the chunk vectors.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

KNOWN_FALSE_NULL = re.compile(r"^NULL value in (\w+)\.(\w+)$")
"""The message SQLite 3.40.1 emits falsely for WITHOUT ROWID tables."""


def check_store_file(path: Path) -> list[str]:
    """Problems found in the collection database at `path` (opened read-only); [] when sound.

    Safe on the database of a running server (WAL: one read transaction sees one commit).
    """
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        connection.execute("BEGIN")  # one snapshot for every check
        return integrity_problems(connection) + invariant_problems(connection)
    finally:
        connection.close()


def integrity_problems(connection: sqlite3.Connection) -> list[str]:
    """`PRAGMA integrity_check` messages, without the known false NULL reports."""
    messages = [str(row[0]) for row in connection.execute("PRAGMA integrity_check")]
    if messages == ["ok"]:
        return []
    return [m for m in messages if not _known_false_null(connection, m)]


def invariant_problems(connection: sqlite3.Connection) -> list[str]:
    """Violations of the store's own rules (see the module docstring)."""
    found = [
        f"foreign key violation: {table} row {rowid} -> {parent}"
        for table, rowid, parent, _ in connection.execute("PRAGMA foreign_key_check")
    ]
    sequence = _scalar(connection, "SELECT seq FROM sqlite_sequence WHERE name = 'changes'")
    orphans = connection.execute(
        "SELECT c.row_id FROM chunks c LEFT JOIN documents d USING (document_id) "
        "WHERE d.document_id IS NULL LIMIT 10"
    ).fetchall()
    if orphans:
        found.append(f"chunks without their document: row ids {[r[0] for r in orphans]}")
    counts = connection.execute(
        "SELECT d.document_id, d.chunk_count, COUNT(c.row_id), "
        "COALESCE(MIN(c.ordinal), 0), COALESCE(MAX(c.ordinal), -1) "
        "FROM documents d LEFT JOIN chunks c USING (document_id) GROUP BY d.document_id"
    ).fetchall()
    for document_id, recorded, held, low, high in counts:
        if recorded != held or (held and (low, high) != (0, held - 1)):
            found.append(
                f"document {document_id!r} records {recorded} chunks; the store holds {held} "
                f"with ordinals {low}..{high}"
            )
    found += section_problems(connection)
    for what, sql in (
        ("change", "SELECT MAX(seq) FROM changes"),
        ("chunk", "SELECT MAX(seq) FROM chunks"),
        ("document", "SELECT MAX(updated_seq) FROM documents"),
    ):
        latest = _scalar(connection, sql)
        if latest > sequence:
            found.append(f"a {what} row is at sequence {latest}, past the store's {sequence}")
    return found


def section_problems(connection: sqlite3.Connection) -> list[str]:
    """Section vectors that no chunk uses, chunks missing theirs, and vectors of the wrong width."""
    found: list[str] = []
    if not _scalar(connection, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'sections'"):
        return found  # a file no current store has opened yet
    unused = connection.execute(
        "SELECT s.document_id, s.section_path_json FROM sections s WHERE NOT EXISTS (SELECT 1 "
        "FROM chunks c WHERE c.document_id = s.document_id "
        "AND c.section_path_json = s.section_path_json) LIMIT 10"
    ).fetchall()
    if unused:
        found.append(f"section vectors no chunk belongs to: {[tuple(r) for r in unused]}")
    missing = connection.execute(
        "SELECT c.row_id FROM chunks c WHERE EXISTS (SELECT 1 FROM sections s "
        "WHERE s.document_id = c.document_id) AND NOT EXISTS (SELECT 1 FROM sections s "
        "WHERE s.document_id = c.document_id AND s.section_path_json = c.section_path_json) "
        "LIMIT 10"
    ).fetchall()
    if missing:
        found.append(f"chunks without their section vector: row ids {[r[0] for r in missing]}")
    widths = connection.execute(
        "SELECT DISTINCT length(embedding) FROM sections "
        "UNION SELECT DISTINCT length(embedding) FROM chunks"
    ).fetchall()
    if len(widths) > 1:
        found.append(f"stored vectors differ in width: {sorted(r[0] for r in widths)} bytes")
    return found


def _known_false_null(connection: sqlite3.Connection, message: str) -> bool:
    match = KNOWN_FALSE_NULL.match(message)
    if match is None:
        return False
    table, column = match.groups()
    sql = connection.execute(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    if sql is None or "WITHOUT ROWID" not in str(sql[0]).upper():
        return False
    columns = {row[1]: row for row in connection.execute(f'PRAGMA table_info("{table}")')}
    info = columns.get(column)
    if info is None or not info[3] or info[5]:  # (cid, name, type, notnull, default, pk)
        return False
    # typeof(), not IS NULL: the planner folds `IS NULL` on a NOT NULL column to false.
    nulls = _scalar(
        connection, f'SELECT COUNT(*) FROM "{table}" WHERE typeof("{column}") = \'null\''
    )
    return nulls == 0


def _scalar(connection: sqlite3.Connection, sql: str) -> int:
    row = connection.execute(sql).fetchone()
    return 0 if row is None or row[0] is None else int(row[0])
