"""`MilvusStore`: a collection's source of truth in Milvus (the `Store` protocol).

Two Milvus collections per groundwire collection (see `schema`), plus the `writes` collection
that mints sequence numbers (see `sequence`). Milvus has no multi-entity transactions, so an
upsert is ordered to make its last step the commit point: insert the new chunks, delete the
document's other chunks, write its text parts, then its record with the content hash, then the
sequence. A write cut off before its record leaves the old hash, so the retry is not skipped as
an idempotent repeat and its delete step removes whatever the cut-off attempt had inserted.
Row ids are random 63-bit integers (no cluster-wide counter is needed; a collision needs ~3e9
chunks for even odds) and never reused in practice.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from core.errors import FailedPrecondition
from core.milvus import naming
from core.milvus.entities import (
    chunk_entity,
    chunk_from_entity,
    document_payload,
    lexical_row_from_entity,
    risk_level_of,
    stored_document,
)
from core.milvus.filter_expression import chunk_filter_expression, string_literal
from core.milvus.link_graph import MilvusLinkGraph
from core.milvus.options import MilvusOptions
from core.milvus.queries import query_all, query_pages
from core.milvus.refusals import TUNE_REFUSAL
from core.milvus.schema import (
    CHUNK_OUTPUT_FIELDS,
    RECORD_VECTOR_DIM,
    TEXT_PART_CHARS,
    chunks_index_params,
    chunks_schema,
    records_index_params,
    records_schema,
)
from core.milvus.sequence import mint_sequence, writes_schema
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

EMBEDDING_DIM_KEY = "embedding_dim"
SEQUENCE_KEY = "sequence"
_BATCH = 1000
"""Ids per `in [...]` list and entities per query page."""
_PLACEHOLDER = [0.0] * RECORD_VECTOR_DIM
_NO_RISK: ChunkRisk = ((), 0)  # type: ignore[assignment]


def new_row_id() -> int:
    """A random positive 63-bit row id."""
    return secrets.randbits(63) or 1


def id_list(row_ids: Sequence[int]) -> str:
    """Integers as a Milvus list literal (ints only: nothing to escape)."""
    return "[" + ", ".join(str(int(i)) for i in row_ids) + "]"


class MilvusStore:
    """One groundwire collection in Milvus; thread-safe (pymilvus clients are)."""

    def __init__(self, client: Any, options: MilvusOptions, name: str) -> None:
        self.client = client
        self.options = options
        self.chunks = naming.chunks_collection(name)
        self.records = naming.records_collection(name)
        self.writes = naming.writes_collection(name)
        self.memories = naming.memories_collection(name)
        self.links = MilvusLinkGraph(client, self.chunks, self.records)
        self._lock = threading.Lock()
        self._edge_count: tuple[int, int] | None = None

    @classmethod
    def create(
        cls, client: Any, pymilvus: Any, options: MilvusOptions, name: str, dimension: int
    ) -> MilvusStore:
        """Create the collections of `name` (replacing leftovers of a dropped one) and load them.

        `records` comes first: once it exists, other replicas see the create in progress."""
        store = cls(client, options, name)
        for collection in (store.chunks, store.records, store.writes, store.memories):
            if client.has_collection(collection):
                client.drop_collection(collection)
        client.create_collection(
            store.records,
            schema=records_schema(pymilvus),
            index_params=records_index_params(client),
            consistency_level="Strong",
        )
        client.create_collection(
            store.writes, schema=writes_schema(pymilvus), index_params=records_index_params(client)
        )
        client.create_collection(
            store.chunks,
            schema=chunks_schema(pymilvus, dimension),
            index_params=chunks_index_params(client, options),
            consistency_level="Strong",
        )
        store.load()
        store.set_meta(EMBEDDING_DIM_KEY, str(dimension))
        return store

    @classmethod
    def open(cls, client: Any, options: MilvusOptions, name: str) -> MilvusStore:
        """Open the existing collections of `name`; FileNotFoundError when there are none."""
        store = cls(client, options, name)
        if not client.has_collection(store.records):
            raise FileNotFoundError(f"Milvus holds no collection {name!r}")
        store.load()
        return store

    def load(self) -> None:
        """Load the collections for search (needed after a Milvus restart)."""
        for collection in (self.writes, self.records, self.chunks):
            self.client.load_collection(collection)

    def drop(self) -> None:
        """Drop the collections of this groundwire collection."""
        for collection in (self.chunks, self.records, self.writes):
            self.client.drop_collection(collection)
        if self.client.has_collection(self.memories):  # created on the first memory
            self.client.drop_collection(self.memories)

    # ---- writes ---------------------------------------------------------------------------

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
        """Replace `document` and its chunks; durable on return (commit point: the record).
        Milvus collections keep no section vectors (their config says so): `sections` must be
        empty."""
        if sections.paths:
            raise ValueError("Milvus collections store no section vectors")
        matrix = self._checked_embeddings(embeddings, len(chunks))
        if len(links.links) > len(chunks) or len(links.anchors) > len(chunks):
            raise ValueError(f"link rows for more chunks than the {len(chunks)} written")
        risks = list(risk) if risk is not None else [_NO_RISK] * len(chunks)
        row_ids = [new_row_id() for _ in chunks]
        entities = [
            chunk_entity(
                row_id,
                document,
                content_hash,
                ordinal,
                draft,
                matrix[ordinal],
                risks[ordinal],
                links.links[ordinal] if ordinal < len(links.links) else (),
                links.anchors[ordinal] if ordinal < len(links.anchors) else (),
            )
            for ordinal, (row_id, draft) in enumerate(zip(row_ids, chunks, strict=True))
        ]
        with self._lock:
            for start in range(0, len(entities), _BATCH):
                self.client.insert(self.chunks, entities[start : start + _BATCH])
            removed = self._delete_chunks_of(document.document_id, keep=row_ids)
            sequence = mint_sequence(self.client, self.writes)
            self._write_document(document, content_hash, len(chunks), sequence, links)
            self._publish(sequence)
        return UpsertResult(sequence, tuple(row_ids), tuple(removed))

    def get_section_vectors(self, row_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """None are stored in Milvus mode: empty (row ids, vectors)."""
        return np.zeros(0, dtype=np.int64), np.zeros((0, self._dimension()), dtype=np.float32)

    def replace_embeddings(
        self,
        row_ids: np.ndarray,
        embeddings: np.ndarray,
        meta: Mapping[str, str],
        sections: Sequence[tuple[str, SectionVectors]] = (),
    ) -> None:
        """Not in Milvus mode: re-embedding with a tuned model is refused before it gets here
        (`MilvusBackend.maintenance_refusal`); this keeps a direct caller from half-doing it."""
        raise FailedPrecondition(TUNE_REFUSAL)

    def delete_documents(self, document_ids: Sequence[str]) -> DeleteResult:
        """Delete the named documents and their chunks; one sequence for the whole call."""
        deleted: list[str] = []
        not_found: list[str] = []
        removed: list[int] = []
        with self._lock:
            for document_id in dict.fromkeys(document_ids):
                if self._document_record(document_id) is None:
                    not_found.append(document_id)
                    continue
                removed += self._delete_chunks_of(document_id, keep=())
                self._delete_records_of(document_id)
                deleted.append(document_id)
            sequence = self.sequence()
            if deleted:
                sequence = mint_sequence(self.client, self.writes)
                self._publish(sequence)
        return DeleteResult(sequence, tuple(deleted), tuple(not_found), tuple(removed))

    def set_meta(self, key: str, value: str) -> None:
        """Set one collection setting."""
        self.client.upsert(self.records, [_record(f"meta:{key}", "meta", "", value, {})])

    def publish_write(self) -> int:
        """Publish a new sequence for a write stored elsewhere (memories); that sequence."""
        sequence = mint_sequence(self.client, self.writes)
        self._publish(sequence)
        return sequence

    def _publish(self, sequence: int) -> None:
        self.set_meta(SEQUENCE_KEY, str(sequence))

    def _checked_embeddings(self, embeddings: np.ndarray, count: int) -> np.ndarray:
        matrix = np.ascontiguousarray(embeddings, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != count:
            raise ValueError(f"embeddings must have shape ({count}, d), got {matrix.shape}")
        pinned = self.get_meta(EMBEDDING_DIM_KEY)
        if pinned is not None and int(pinned) != matrix.shape[1]:
            raise ValueError(
                f"embeddings have dimension {matrix.shape[1]}, the collection expects {pinned}"
            )
        return matrix

    def _delete_chunks_of(self, document_id: str, keep: Sequence[int]) -> list[int]:
        """Delete the document's chunks except `keep`; their row ids."""
        literal = _literal(document_id)
        found = self._query(self.chunks, f"document_id == {literal}", ["row_id"])
        kept = set(keep)
        stale = sorted(int(e["row_id"]) for e in found if int(e["row_id"]) not in kept)
        for start in range(0, len(stale), _BATCH):
            self.client.delete(self.chunks, ids=stale[start : start + _BATCH])
        return stale

    def _write_document(
        self,
        document: Document,
        content_hash: str,
        chunks: int,
        sequence: int,
        links: DocumentLinks,
    ) -> None:
        document_id = document.document_id
        parts = [
            document.text[start : start + TEXT_PART_CHARS]
            for start in range(0, len(document.text), TEXT_PART_CHARS)
        ]
        self._delete_records_of(document_id, keep_document=True)
        records = [
            _record(f"text:{index}:{document_id}", "text", document_id, part, {})
            for index, part in enumerate(parts)
        ]
        records += [
            _record(f"key:{rank}:{document_id}", "key", document_id, key, {"rank": rank})
            for rank, key in links.keys
        ]
        payload = document_payload(document, content_hash, chunks, sequence)
        payload["text_parts"] = len(parts)
        for start in range(0, len(records), _BATCH):
            self.client.upsert(self.records, records[start : start + _BATCH])
        self.client.upsert(
            self.records, [_record(f"doc:{document_id}", "doc", document_id, content_hash, payload)]
        )

    def _delete_records_of(self, document_id: str, keep_document: bool = False) -> None:
        """Delete the document's records (text parts, link keys and, unless kept, itself)."""
        condition = f"document_id == {_literal(document_id)}"
        if keep_document:
            condition += ' and kind != "doc"'
        self.client.delete(self.records, filter=condition)

    # ---- reads ------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """One collection setting, or None when unset."""
        found = self._records_by_key([f"meta:{key}"], ["value"])
        return str(found[0]["value"]) if found else None

    def document_hash(self, document_id: str) -> str | None:
        """The stored content hash of a document, or None when it is not stored."""
        record = self._document_record(document_id)
        return None if record is None else str(record["value"])

    def _document_record(self, document_id: str) -> dict[str, Any] | None:
        found = self._records_by_key([f"doc:{document_id}"], ["value", "payload"])
        return found[0] if found else None

    def _records_by_key(self, keys: Sequence[str], fields: list[str]) -> list[dict[str, Any]]:
        """Records by primary key through an escaped expression (pymilvus' `get` writes string
        ids into its expression unescaped); a key Milvus cannot express matches nothing."""
        literals = [literal for key in keys if (literal := string_literal(key)) is not None]
        if not literals:
            return []
        found = self.client.query(
            self.records, filter=f"key in [{', '.join(literals)}]", output_fields=["key", *fields]
        )
        return [dict(entity) for entity in found]

    def get_document(self, document_id: str) -> StoredDocument | None:
        """A stored document with its chunks in ordinal order, or None."""
        record = self._document_record(document_id)
        if record is None:
            return None
        payload = dict(record["payload"])
        parts = int(payload.get("text_parts", 0))
        keys = [f"text:{index}:{document_id}" for index in range(parts)]
        texts = self._records_by_key(keys, ["value"]) if parts else []
        by_key = {str(e["key"]): str(e["value"]) for e in texts}
        text = "".join(by_key.get(f"text:{i}:{document_id}", "") for i in range(parts))
        entities = self._query(
            self.chunks, f"document_id == {_literal(document_id)}", CHUNK_OUTPUT_FIELDS
        )
        chunks = sorted((chunk_from_entity(e) for e in entities), key=lambda c: c.ordinal)
        return stored_document(document_id, payload, text, chunks)

    def get_chunks(self, row_ids: Sequence[int]) -> dict[int, Chunk]:
        """Live chunks by row id; unknown or deleted ids are absent."""
        unique = list(dict.fromkeys(int(i) for i in row_ids))
        found: dict[int, Chunk] = {}
        for entity in self._chunk_entities(unique, CHUNK_OUTPUT_FIELDS):
            chunk = chunk_from_entity(entity)
            found[chunk.row_id] = chunk
        return {rid: found[rid] for rid in unique if rid in found}

    def get_risk_levels(self, row_ids: Sequence[int]) -> dict[int, RiskLevel]:
        """The risk level of each live chunk among `row_ids`; unknown or deleted ids are absent."""
        unique = list(dict.fromkeys(int(i) for i in row_ids))
        entities = self._chunk_entities(unique, ["row_id", "risk_level"])
        return {int(entity["row_id"]): risk_level_of(entity) for entity in entities}

    def get_vectors(self, row_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Embeddings of the live chunks among `row_ids`: (int64 (n,), float32 (n, d)), by id."""
        unique = sorted(dict.fromkeys(int(i) for i in row_ids))
        entities = list(self._chunk_entities(unique, ["row_id", "vector"]))
        return _vectors(entities, self._dimension())

    def _chunk_entities(self, row_ids: list[int], fields: list[str]) -> Iterator[dict[str, Any]]:
        """The live chunk entities among `row_ids` (distinct) with `fields`, read `_BATCH` ids
        at a time."""
        for start in range(0, len(row_ids), _BATCH):
            yield from self.client.get(
                self.chunks, ids=row_ids[start : start + _BATCH], output_fields=fields
            )

    def get_lexical_rows(self, row_ids: Sequence[int]) -> list[LexicalRow]:
        """Lexical rows of the live chunks among `row_ids`, ascending by row id."""
        chunks = self.get_chunks(row_ids)
        return [
            lexical_row_from_entity(
                {
                    "row_id": c.row_id,
                    "text": c.text,
                    "title": c.title,
                    "section_path": c.section_path,
                }
            )
            for _, c in sorted(chunks.items())
        ]

    def iter_live_vectors(
        self, batch_size: int = 4096, max_seq: int | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """All live embeddings in batches (`max_seq` is not tracked per chunk in Milvus)."""
        for page in self._pages("", ["row_id", "vector"], batch_size):
            yield _vectors(page, self._dimension())

    def iter_live_texts(
        self, batch_size: int = 4096, max_seq: int | None = None
    ) -> Iterator[list[LexicalRow]]:
        """All live chunks as `LexicalRow`s in batches (ascending row id within a batch)."""
        fields = ["row_id", "text", "title", "section_path"]
        for page in self._pages("", fields, batch_size):
            rows = [lexical_row_from_entity(e) for e in page]
            yield sorted(rows, key=lambda row: row.row_id)

    def iter_chunks(self, expression: str, batch_size: int = 4096) -> Iterator[list[Chunk]]:
        """The live chunks matching a Milvus boolean expression ("" = all), in batches."""
        for page in self._pages(expression, CHUNK_OUTPUT_FIELDS, batch_size):
            yield [chunk_from_entity(e) for e in page]

    def iter_matching(self, chunk_filter: ChunkFilter) -> Iterator[list[Chunk]]:
        """The live chunks the filter's Milvus expression admits (a superset of those
        `chunk_filter.matches` admits; see `filter_expression`)."""
        yield from self.iter_chunks(chunk_filter_expression(chunk_filter))

    def changes_since(self, seq: int) -> list[Change]:
        """Always empty: Milvus maintains its indexes itself, nothing replays a change log."""
        return []

    def sequence(self) -> int:
        """The sequence of the last write of any replica; 0 for a collection never written."""
        value = self.get_meta(SEQUENCE_KEY)
        return 0 if value is None else int(value)

    def edges_from(self, row_ids: Sequence[int]) -> dict[int, list[Edge]]:
        """Link-graph edges leaving each live row, to live targets only."""
        return self.links.edges_from(row_ids)

    def edge_count(self) -> int:
        """Edges stored in the link graph (recounted only after a write)."""
        sequence = self.sequence()
        if self._edge_count is None or self._edge_count[0] != sequence:
            self._edge_count = (sequence, self.links.edge_count())
        return self._edge_count[1]

    def counts(self) -> tuple[int, int]:
        """(number of documents, number of live chunks)."""
        return self._count(self.records, 'kind == "doc"'), self._count(self.chunks, "")

    def close(self) -> None:
        """Nothing to release: the connections belong to the backend."""

    def _count(self, collection: str, expression: str) -> int:
        found = self.client.query(collection, filter=expression, output_fields=["count(*)"])
        return int(found[0]["count(*)"])

    def _dimension(self) -> int:
        return int(self.get_meta(EMBEDDING_DIM_KEY) or 0)

    def _query(self, collection: str, expression: str, fields: list[str]) -> list[dict[str, Any]]:
        return query_all(self.client, collection, expression, fields)

    def _pages(
        self, expression: str, fields: list[str], batch_size: int
    ) -> Iterator[list[dict[str, Any]]]:
        return query_pages(self.client, self.chunks, expression, fields, batch_size)


def _record(
    key: str, kind: str, document_id: str, value: str, payload: dict[str, Any]
) -> dict[str, Any]:
    return {
        "key": key,
        "kind": kind,
        "document_id": document_id,
        "value": value,
        "payload": payload,
        "placeholder": _PLACEHOLDER,
    }


def _literal(value: str) -> str:
    """A string literal for an id; ids with control characters cannot be expressed."""
    literal = string_literal(value)
    if literal is None:
        raise ValueError(f"{value!r} holds a control character Milvus expressions cannot carry")
    return literal


def _vectors(entities: Sequence[dict[str, Any]], dimension: int) -> tuple[np.ndarray, np.ndarray]:
    ordered = sorted(entities, key=lambda e: int(e["row_id"]))
    ids = np.array([int(e["row_id"]) for e in ordered], dtype=np.int64)
    if not ordered:
        return ids, np.zeros((0, dimension), dtype=np.float32)
    return ids, np.asarray([e["vector"] for e in ordered], dtype=np.float32)
