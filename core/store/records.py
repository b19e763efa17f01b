"""Value objects the SQLite store returns: write results, change records and index feed rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from core.models import Chunk, SourceType

ChangeOp = Literal["upsert", "delete"]


@dataclass(frozen=True, slots=True)
class UpsertResult:
    """Outcome of one committed document upsert.

    `seq` is the change sequence number; `added_row_ids` are the new chunks' row ids (in ordinal
    order) and `removed_row_ids` those of the chunks the upsert replaced.
    """

    seq: int
    added_row_ids: tuple[int, ...]
    removed_row_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class DeleteResult:
    """Outcome of one committed delete: `seq` is the last change written (the current sequence
    when nothing was deleted)."""

    seq: int
    deleted: tuple[str, ...]
    not_found: tuple[str, ...]
    removed_row_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Change:
    """One entry of the change log, replayed by the derived indexes in `seq` order."""

    seq: int
    op: ChangeOp
    document_id: str
    added_row_ids: tuple[int, ...]
    removed_row_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """A stored document: the fields of `Document`, its content hash and its chunks by ordinal."""

    document_id: str
    text: str
    source_type: SourceType
    source_path: str
    title: str
    metadata: Mapping[str, str]
    content_hash: str
    updated_seq: int
    chunks: list[Chunk] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LexicalRow:
    """What the lexical index needs of one chunk; `section` is the section path joined by " / "."""

    row_id: int
    text: str
    title: str
    section: str
