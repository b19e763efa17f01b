"""Ingestion into a collection: validate, chunk, extract links and embed outside any lock, then
hand the prepared documents to `Collection.commit`, the one place writes are committed."""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.model_check import ModelCheck
from core.embed.protocol import Embedder
from core.embed.section_context import chunk_vectors
from core.embed.section_vectors import plain_chunk_vectors, plain_text_of, section_vectors
from core.errors import InvalidArgument
from core.ingest.chunking_spec import ChunkingSpec
from core.ingest.document_chunker import ChunkedDraft, chunk_any
from core.ingest.link_rows import document_link_rows
from core.models import ChunkDraft, Document, RiskLevel
from core.observe import attributes
from core.observe.stage_timer import StageTimer
from core.observe.tracing import span
from core.store.records import NO_SECTIONS, PreparedDocument

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
    """Turns documents into prepared ones and has the collection commit them. Safe to share:
    preparing (the slow part: chunking, links, embedding) runs concurrently for any number of
    callers; only `Collection.commit` serialises, per collection."""

    def __init__(
        self,
        embedder: Embedder,
        chunk_max_tokens: int,
        max_document_bytes: int,
        max_chunks_per_document: int = DEFAULT_MAX_CHUNKS_PER_DOCUMENT,
        model_check: ModelCheck | None = None,
        embedders: Callable[[Collection], Embedder] | None = None,
    ) -> None:
        """`model_check`: refuse to write into a collection indexed with another model.
        `embedders`: the model of each collection (a tuned collection has its own copy,
        core/tune); `embedder` for all when None (it also counts tokens: a tuned copy keeps
        its tokenizer)."""
        self._embedder = embedder
        self._embedders = embedders
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

        `chunking` overrides the collection's default chunking for this batch. Documents whose
        content hash the store already holds are UNCHANGED (checked again at commit). Traced as
        an `index` span with stage spans (chunk, embed, commit) when tracing is on.
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
        drafts: list[tuple[int, _Prepared]] = []
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
                drafts.append((position, item))
        tuned_model = collection.config.tuned_model  # read before embedding: commit checks it
        embedder = self._embedder if self._embedders is None else self._embedders(collection)
        prepared = self._embedded(drafts, embedder, collection.config, timer)
        with timer.stage("commit"):
            results = collection.commit(prepared, tuned_model)
        for (position, _), ready, result in zip(drafts, prepared, results, strict=True):
            document_id = ready.document.document_id
            if result is None:  # an identical upsert committed meanwhile
                outcomes[position] = DocumentOutcome(document_id, Outcome.UNCHANGED)
                continue
            outcomes[position] = DocumentOutcome(
                document_id,
                Outcome.UPSERTED,
                chunk_count=len(ready.chunks),
                sequence=result.seq,
                risk_flags=tuple(sorted({flag for flags, _ in ready.risks for flag in flags})),
            )
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

    def _embedded(
        self,
        drafts: Sequence[tuple[int, _Prepared]],
        embedder: Embedder,
        config: CollectionConfig,
        timer: StageTimer,
    ) -> list[PreparedDocument]:
        """The drafts with their chunks embedded (one model call for the batch, each chunk mixed
        with its section's lead, see `core.embed.section_context`), their section vectors when
        the collection keeps them (one more call, `core.embed.section_vectors`) and their
        link-graph rows extracted."""
        sections = [[(c.section_path, c.text) for c in p.chunks] for _, p in drafts]
        with timer.stage("embed", {attributes.TEXTS: sum(len(s) for s in sections)}):
            vectors = chunk_vectors(embedder, sections, config.section_lead_weight)
            wholes = (
                section_vectors(
                    embedder,
                    sections,
                    [_plain_text(p) for _, p in drafts],
                    plain_chunk_vectors(sections, vectors, config.section_lead_weight),
                )
                if config.section_vectors
                else [NO_SECTIONS] * len(drafts)
            )
        prepared: list[PreparedDocument] = []
        offset = 0
        for (_, item), whole in zip(drafts, wholes, strict=True):
            count = len(item.chunks)
            prepared.append(
                PreparedDocument(
                    document=item.document,
                    content_hash=item.content_hash,
                    chunks=item.chunks,
                    embeddings=vectors[offset : offset + count],
                    risks=item.risks,
                    links=document_link_rows(item.document, item.chunks),
                    sections=whole,
                )
            )
            offset += count
        return prepared


def _plain_text(prepared: _Prepared) -> str | None:
    """A plain-text document's own text (a single section embeds it verbatim), else None."""
    return plain_text_of(prepared.document.source_type, prepared.document.text)


def _risk(chunked: ChunkedDraft) -> tuple[tuple[str, ...], RiskLevel]:
    return chunked.risk_flags, chunked.risk_level


def _with_title(draft: ChunkDraft, title: str) -> ChunkDraft:
    if draft.section_path[:1] == (title,):
        return draft
    return replace(draft, section_path=(title, *draft.section_path))
