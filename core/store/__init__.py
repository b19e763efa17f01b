"""The durable store: one SQLite database per collection, the source of truth for the indexes."""

from __future__ import annotations

from core.store.records import (
    Change,
    ChangeOp,
    ChunkRisk,
    DeleteResult,
    LexicalRow,
    StoredDocument,
    UpsertResult,
)
from core.store.sqlite_store import EMBEDDING_DIM_KEY, SqliteStore

__all__ = [
    "EMBEDDING_DIM_KEY",
    "Change",
    "ChangeOp",
    "ChunkRisk",
    "DeleteResult",
    "LexicalRow",
    "SqliteStore",
    "StoredDocument",
    "UpsertResult",
]
