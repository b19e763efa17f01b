"""`Store` and `LocalStore`: what the pipeline and a collection need from the source of truth.

`Store` is the backend-neutral contract (documents, chunks, embeddings and the change log) that a
distributed backend such as a Milvus cluster could implement. `LocalStore` adds the one thing the
file-level maintenance (compaction, snapshots) needs: the database file it lives in.
`SqliteStore` implements both.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from core.models import Chunk, ChunkDraft, Document, Edge, RiskLevel
from core.retrieve.filters import ChunkFilter
from core.store.records import (
    NO_LINKS,
    NO_SECTIONS,
    Change,
    ChunkRisk,
    DeleteResult,
    DocumentLinks,
    LexicalRow,
    SectionVectors,
    StoredDocument,
    UpsertResult,
)

__all__ = ["FilteredScan", "LocalStore", "Store"]


@runtime_checkable
class Store(Protocol):
    """The durable source of truth of one collection.

    Every write is durable when it returns and advances a change sequence number that never goes
    back; row ids are never reused, so derived indexes can key on them.
    """

    def upsert_document(
        self,
        document: Document,
        content_hash: str,
        chunks: Sequence[ChunkDraft],
        embeddings: np.ndarray,
        risk: Sequence[ChunkRisk] | None = None,
        links: DocumentLinks = NO_LINKS,
        sections: SectionVectors = NO_SECTIONS,
    ) -> UpsertResult:
        """Replace `document` and all its chunks (one change). `embeddings`: float32 (n, d);
        `links`: link-graph rows extracted beforehand; `sections`: one vector per distinct
        section path of the chunks (or none), replacing the document's old ones and deleted
        with it."""
        ...

    def delete_documents(self, document_ids: Sequence[str]) -> DeleteResult:
        """Delete the named documents and their chunks (one change each)."""
        ...

    def replace_embeddings(
        self,
        row_ids: np.ndarray,
        embeddings: np.ndarray,
        meta: Mapping[str, str],
        sections: Sequence[tuple[str, SectionVectors]] = (),
    ) -> None:
        """Overwrite the vectors of live chunks, replace the section vectors of the documents
        named in `sections` and set meta keys, in one transaction (a tune's swap); nothing read
        before it (section vectors included) is served after it."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Set one collection setting."""
        ...

    def get_meta(self, key: str) -> str | None:
        """One collection setting, or None when unset."""
        ...

    def document_hash(self, document_id: str) -> str | None:
        """The stored content hash of a document, or None when it is not stored."""
        ...

    def get_document(self, document_id: str) -> StoredDocument | None:
        """A stored document with its chunks in ordinal order, or None."""
        ...

    def get_chunks(self, row_ids: Sequence[int]) -> dict[int, Chunk]:
        """Live chunks by row id; unknown or deleted ids are absent."""
        ...

    def get_risk_levels(self, row_ids: Sequence[int]) -> dict[int, RiskLevel]:
        """The risk level of each live chunk among `row_ids`; unknown or deleted ids are absent
        (what the retrieval pipeline reads of every candidate when no filter needs more)."""
        ...

    def get_vectors(self, row_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Embeddings of the live chunks among `row_ids`: (int64 (n,), float32 (n, d)), by id."""
        ...

    def get_section_vectors(self, row_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The section vector of each live chunk among `row_ids` that has one:
        (int64 (n,) chunk row ids ascending, float32 (n, d))."""
        ...

    def get_lexical_rows(self, row_ids: Sequence[int]) -> list[LexicalRow]:
        """Lexical rows of the live chunks among `row_ids`, ascending by row id."""
        ...

    def iter_live_vectors(
        self, batch_size: int = 4096, max_seq: int | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """All live embeddings by row id in batches (written at or before `max_seq` if given)."""
        ...

    def iter_live_texts(
        self, batch_size: int = 4096, max_seq: int | None = None
    ) -> Iterator[list[LexicalRow]]:
        """All live chunks as `LexicalRow`s by row id in batches; `max_seq` as for vectors."""
        ...

    def changes_since(self, seq: int) -> list[Change]:
        """Every change still in the log with a sequence number greater than `seq`, ascending."""
        ...

    def sequence(self) -> int:
        """The last change sequence number; 0 for a store that never changed."""
        ...

    def edges_from(self, row_ids: Sequence[int]) -> dict[int, list[Edge]]:
        """Link-graph edges leaving each live row, to live targets only."""
        ...

    def edge_count(self) -> int:
        """Edges stored in the link graph."""
        ...

    def counts(self) -> tuple[int, int]:
        """(number of documents, number of live chunks)."""
        ...

    def close(self) -> None:
        """Release the store; it is unusable afterwards."""
        ...


@runtime_checkable
class LocalStore(Store, Protocol):
    """A `Store` kept in a single local database file (compaction and snapshots copy it)."""

    @property
    def path(self) -> Path:
        """The database file."""
        ...


@runtime_checkable
class FilteredScan(Protocol):
    """A store that evaluates chunk filters itself (Milvus), so a filtered scan reads only
    the chunks that can match."""

    def iter_matching(self, chunk_filter: ChunkFilter) -> Iterator[list[Chunk]]:
        """Batches of live chunks including every chunk `chunk_filter` admits (possibly more)."""
        ...
