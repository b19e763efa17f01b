"""Value objects of the store: what a write takes (a prepared document with its link rows), write
results, change records and index feed rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from core.models import Chunk, ChunkDraft, Document, RiskLevel, SourceType

ChangeOp = Literal["upsert", "delete"]

ChunkRisk = tuple[tuple[str, ...], RiskLevel]
"""(risk flags, risk level) of one chunk."""


@dataclass(frozen=True, slots=True)
class DocumentLinks:
    """The link-graph rows of one document, extracted before its write (see
    `core.ingest.link_rows`); the store writes them as given and resolves them when read."""

    keys: tuple[tuple[int, str], ...] = ()
    """(rank, key) pairs links to this document are matched on (`link_resolver` ranks)."""
    links: tuple[tuple[tuple[str, str], ...], ...] = ()
    """Per chunk (by ordinal; may stop early): its internal links as (target, fragment)."""
    anchors: tuple[tuple[str, ...], ...] = ()
    """Per chunk (by ordinal; may stop early): the anchor slugs it can be reached by."""


NO_LINKS = DocumentLinks()


@dataclass(frozen=True, slots=True)
class SectionVectors:
    """One vector per section of a document (its heading path and lead text embedded whole),
    stored beside the chunk vectors; a chunk belongs to the section with its `section_path`."""

    paths: tuple[tuple[str, ...], ...] = ()
    """Distinct section paths, in order of first appearance."""
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    """float32 (len(paths), d): row i embeds section paths[i]."""


NO_SECTIONS = SectionVectors()


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    """One document ready to commit: everything slow (parsing, chunking, link extraction,
    embedding) is done, so a collection writes it under its lock in one short step."""

    document: Document
    content_hash: str
    chunks: tuple[ChunkDraft, ...]
    embeddings: np.ndarray
    """float32 (len(chunks), d): row i embeds chunks[i]."""
    risks: tuple[ChunkRisk, ...]
    """(flags, level) per chunk."""
    links: DocumentLinks = NO_LINKS
    sections: SectionVectors = NO_SECTIONS


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
