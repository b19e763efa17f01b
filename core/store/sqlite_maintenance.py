"""File-level maintenance of a SQLite store on its own connections: pruning the change log,
reclaiming space, and consistent online copies.

A separate connection is used so the store's own connection (and the queries it serves) is not
held for the duration; SQLite's WAL mode lets readers continue while these run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

logger = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 30_000


@contextlib.contextmanager
def maintenance_connection(path: Path) -> Iterator[sqlite3.Connection]:
    """An autocommit connection to the existing database at `path`, closed on exit."""
    if not path.is_file():
        raise FileNotFoundError(f"no SQLite database at {path}")
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        yield connection
    finally:
        connection.close()


def prune_changes(path: Path, through_seq: int) -> int:
    """Delete change-log entries with seq <= `through_seq`; how many were deleted.

    The AUTOINCREMENT counter (`sqlite_sequence`) is untouched, so sequence numbers stay
    monotonic even when the log becomes empty.
    """
    with maintenance_connection(path) as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            cursor = db.execute("DELETE FROM changes WHERE seq <= ?", (through_seq,))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    return max(cursor.rowcount, 0)


def reclaim_space(path: Path) -> None:
    """Checkpoint the WAL, VACUUM the database, and truncate the WAL again.

    Row ids of tables with an INTEGER PRIMARY KEY (and `sqlite_sequence`) are preserved.
    """
    with maintenance_connection(path) as db:
        _checkpoint(db, path)
        db.execute("VACUUM")
        _checkpoint(db, path)


def begin_snapshot_read(path: Path) -> sqlite3.Connection:
    """A new connection with an open read transaction pinned to the database's current state.

    Later commits by other connections are invisible to it; `copy_database` copies exactly this
    state. The caller closes it.
    """
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        connection.execute("BEGIN")
        connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # pins the snapshot
    except BaseException:
        connection.close()
        raise
    return connection


def copy_database(source: sqlite3.Connection, target: Path) -> None:
    """Copy the state `source` sees into a new single-file database at `target` (fsynced)."""
    destination = sqlite3.connect(target, isolation_level=None)
    try:
        source.backup(destination)
        destination.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
    finally:
        destination.close()
    with open(target, "rb") as handle:
        os.fsync(handle.fileno())


def _checkpoint(db: sqlite3.Connection, path: Path) -> None:
    busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        logger.info("WAL checkpoint of %s was blocked by a reader; it will finish later", path)


def read_position(connection: sqlite3.Connection) -> tuple[int, int, int]:
    """(change sequence, documents, chunks) of a store database as `connection` sees it."""
    row = connection.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").fetchone()
    documents = connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    chunks = connection.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    return (0 if row is None else int(row[0])), int(documents), int(chunks)
