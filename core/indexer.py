"""Ingestion into a collection: validate, chunk, embed, commit to the store, mirror into indexes."""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np

from core.catalog.collection import Collection
from core.catalog.model_check import ModelCheck
from core.embed.embedding_text import embedding_text
from core.embed.protocol import Embedder
from core.errors import InvalidArgument
from core.ingest.chunking_spec import ChunkingSpec
from core.ingest.document_chunker import ChunkedDraft, chunk_any
from core.models import ChunkDraft, Document, RiskLevel
from core.observe import attributes
from core.observe.stage_timer import StageTimer
from core.observe.tracing import span
from core.store.sqlite_store import LexicalRow

logger = logging.getLogger(__name__)

MAX_DOCUMENT_ID_CHARS = 256
DEFAULT_MAX_CHUNKS_PER_DOCUMENT = 5000


class Outcome(str, Enum):
    """What happened to one document."""

    UPSERTED = "upserted"
    UNCHANGED = "unchanged"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class DocumentOutcome:
    """The result of indexing one document."""

    document_id: str
    outcome: Outcome
    chunk_count: int = 0
    error: str = ""
    sequence: int = 0
    risk_flags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Prepared:
    document: Document
    content_hash: str
    chunks: tuple[ChunkDraft, ...]
    risks: tuple[tuple[tuple[str, ...], RiskLevel], ...]


def validate_document_id(document_id: str, field: str = "documents.document_id") -> None:
    """Raise InvalidArgument unless the id is 1-256 characters without control characters."""
    if not document_id or len(document_id) > MAX_DOCUMENT_ID_CHARS:
        raise InvalidArgument.field(field, "must be 1-256 characters")
    if any(unicodedata.category(ch) in {"Cc", "Cf", "Cs"} for ch in document_id):
        raise InvalidArgument.field(field, "must not contain control characters")


class Indexer:
    """Turns documents into stored, indexed chunks. Safe to share; writes serialise per collection."""

    def __init__(
        self,
        embedder: Embedder,
        chunk_max_tokens: int,
        max_document_bytes: int,
        max_chunks_per_document: int = DEFAULT_MAX_CHUNKS_PER_DOCUMENT,
        model_check: ModelCheck | None = None,
    ) -> None:
        """`model_check`: refuse to write into a collection indexed with another model."""
        self._embedder = embedder
        self._model_check = model_check
        self._chunk_max_tokens = chunk_max_tokens
        self._max_document_bytes = max_document_bytes
        self._max_chunks = max_chunks_per_document

    def index(
        self,
        collection: Collection,
        documents: Sequence[Document],
        chunking: ChunkingSpec | None = None,
    ) -> list[DocumentOutcome]:
        """Index a batch; each document succeeds or fails on its own. Durable when it returns.

        `chunking` overrides the collection's default chunking for this batch. Traced as an
        `index` span with stage spans (chunk, embed, commit, index_update) when tracing is on.
        """
        scope: attributes.Attributes = {
            attributes.COLLECTION: collection.name,
            attributes.DOCUMENTS: len(documents),
        }
        with span("index", scope) as current:
            outcomes = self._index(collection, documents, chunking, StageTimer("index"))
            current.set_attribute(attributes.CHUNKS, sum(o.chunk_count for o in outcomes))
            return outcomes

    def _index(
        self,
        collection: Collection,
        documents: Sequence[Document],
        chunking: ChunkingSpec | None,
        timer: StageTimer,
    ) -> list[DocumentOutcome]:
        if self._model_check is not None:
            self._model_check.require(collection)
        spec = chunking or self._default_chunking(collection)
        outcomes: dict[int, DocumentOutcome] = {}
        prepared: list[tuple[int, _Prepared]] = []
        with collection.write_lock:
            for position, document in enumerate(documents):
                try:
                    with timer.stage("chunk"):
                        item = self._prepare(collection, document, spec)
                except InvalidArgument as exc:
                    outcomes[position] = DocumentOutcome(
                        document.document_id, Outcome.FAILED, error=str(exc)
                    )
                    continue
                if item is None:
                    outcomes[position] = DocumentOutcome(document.document_id, Outcome.UNCHANGED)
                else:
                    prepared.append((position, item))
            sequence = self._write(collection, prepared, outcomes, timer)
            if prepared:
                with timer.stage("index_update"):
                    collection.commit_indexes(sequence, persist_dense=False)
        return [outcomes[i] for i in range(len(documents))]

    def _default_chunking(self, collection: Collection) -> ChunkingSpec:
        """The collection's chunking; the indexer's size where the collection records none."""
        config = collection.config
        if config.chunk_max_tokens:
            return config.chunking
        return replace(config, chunk_max_tokens=self._chunk_max_tokens).chunking

    def _prepare(
        self, collection: Collection, document: Document, chunking: ChunkingSpec
    ) -> _Prepared | None:
        validate_document_id(document.document_id)
        size = len(document.text.encode("utf-8", "surrogatepass")) + len(document.content)
        if size > self._max_document_bytes:
            raise InvalidArgument.field(
                "documents.text",
                f"document {document.document_id!r} is {size} bytes; the limit is "
                f"{self._max_document_bytes} (indexing.max_document_bytes); split it",
            )
        content_hash = document.content_hash()
        if collection.store.document_hash(document.document_id) == content_hash:
            return None
        chunked = chunk_any(document, document.content, chunking, self._embedder.count_tokens)
        if not chunked:
            raise InvalidArgument.field(
                "documents.text", f"document {document.document_id!r} has no indexable text"
            )
        if len(chunked) > self._max_chunks:
            raise InvalidArgument.field(
                "documents.text",
                f"document {document.document_id!r} makes {len(chunked)} chunks; the limit is "
                f"{self._max_chunks} (limits.max_chunks_per_document); split it or raise "
                "chunking.max_tokens",
            )
        drafts = [
            _with_title(c.draft, document.title) if document.title else c.draft for c in chunked
        ]
        return _Prepared(document, content_hash, tuple(drafts), tuple(_risk(c) for c in chunked))

    def _write(
        self,
        collection: Collection,
        prepared: Sequence[tuple[int, _Prepared]],
        outcomes: dict[int, DocumentOutcome],
        timer: StageTimer,
    ) -> int:
        texts = [embedding_text(c.section_path, c.text) for _, p in prepared for c in p.chunks]
        with timer.stage("embed", {attributes.TEXTS: len(texts)}):
            vectors = (
                self._embedder.embed_documents(texts) if texts else np.empty((0, 0), np.float32)
            )
        offset = 0
        sequence = collection.store.sequence()
        for position, item in prepared:
            count = len(item.chunks)
            block = vectors[offset : offset + count]
            offset += count
            with timer.stage("commit"):
                result = collection.store.upsert_document(
                    item.document, item.content_hash, item.chunks, block, item.risks
                )
            rows = [
                LexicalRow(row_id, chunk.text, item.document.title, " / ".join(chunk.section_path))
                for row_id, chunk in zip(result.added_row_ids, item.chunks, strict=True)
            ]
            with timer.stage("index_update"):
                collection.apply_upsert(result.added_row_ids, block, result.removed_row_ids, rows)
            sequence = result.seq
            outcomes[position] = DocumentOutcome(
                item.document.document_id,
                Outcome.UPSERTED,
                chunk_count=count,
                sequence=sequence,
                risk_flags=tuple(sorted({flag for flags, _ in item.risks for flag in flags})),
            )
        return sequence


def _risk(chunked: ChunkedDraft) -> tuple[tuple[str, ...], RiskLevel]:
    return chunked.risk_flags, chunked.risk_level


def _with_title(draft: ChunkDraft, title: str) -> ChunkDraft:
    if draft.section_path[:1] == (title,):
        return draft
    return replace(draft, section_path=(title, *draft.section_path))
