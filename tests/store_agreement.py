"""Read a stopped collection's files directly: do the FAISS and Tantivy indexes on disk hold
exactly the live chunks of the SQLite store, at the store's sequence number?

For a collection directory (the one holding `store.sqlite3`) of a server that is not running.
Dense ids are read from the IDMap2 wrapper (flat and HNSW indexes); flat indexes also have their
vectors compared with the stored embeddings.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import faiss
import numpy as np
import tantivy

from core.dense.faiss_build import id_map_contents, id_map_ids
from core.dense.faiss_file import read_index_file
from core.dense.spec import DenseKind
from core.store.schema import vectors_from_blobs

STORE_FILE = "store.sqlite3"


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """One live chunk row as SQLite holds it."""

    row_id: int
    chunk_id: str
    document_id: str
    ordinal: int
    text: str


@dataclass(frozen=True, slots=True)
class DiskAgreement:
    """What the three stores hold; `problems()` lists every disagreement."""

    store_sequence: int
    documents: dict[str, int]
    """document id -> the chunk count its document row records."""
    chunks: tuple[StoredChunk, ...]
    dense_sequence: int | None
    lexical_sequence: int
    dense_ids: frozenset[int]
    lexical_ids: frozenset[int]
    problems_found: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Human-readable disagreements; empty when FAISS and Tantivy mirror SQLite exactly."""
        live = {chunk.row_id for chunk in self.chunks}
        found = list(self.problems_found)
        if self.dense_sequence != self.store_sequence:
            found.append(
                f"dense index at sequence {self.dense_sequence}, store at {self.store_sequence}"
            )
        if self.lexical_sequence != self.store_sequence:
            found.append(
                f"lexical index at sequence {self.lexical_sequence}, store at {self.store_sequence}"
            )
        for name, ids in (("dense", self.dense_ids), ("lexical", self.lexical_ids)):
            if extra := sorted(ids - live):
                found.append(f"{name} index holds row ids the store does not: {extra[:10]}")
            if missing := sorted(live - ids):
                found.append(f"{name} index lacks live row ids: {missing[:10]}")
        per_document: dict[str, int] = {}
        for chunk in self.chunks:
            per_document[chunk.document_id] = per_document.get(chunk.document_id, 0) + 1
        for document_id, recorded in self.documents.items():
            if per_document.get(document_id, 0) != recorded:
                found.append(
                    f"document {document_id!r} records {recorded} chunks, the store holds "
                    f"{per_document.get(document_id, 0)}"
                )
        if orphans := sorted(set(per_document) - set(self.documents)):
            found.append(f"chunks without a document row: {orphans[:10]}")
        return found


def find_collection_dir(data_dir: Path, collection: str) -> Path:
    """The directory of `collection` under a server data directory (whatever the layout)."""
    matches = sorted(p.parent for p in data_dir.rglob(STORE_FILE) if p.parent.name == collection)
    if len(matches) != 1:
        raise FileNotFoundError(
            f"expected one collection {collection!r} under {data_dir}: {matches}"
        )
    return matches[0]


def read_disk_agreement(directory: Path) -> DiskAgreement:
    """Read SQLite, the FAISS file and the Tantivy index of one stopped collection."""
    problems: list[str] = []
    sequence, documents, chunks, embeddings = _read_store(directory / STORE_FILE)
    saved = read_index_file(directory / "dense")
    dense_ids: frozenset[int] = frozenset()
    if saved is not None:
        tombstones = set(saved.tombstones.tolist())
        ids = id_map_ids(saved.index)
        dense_ids = frozenset(set(ids.tolist()) - tombstones)
        if len(dense_ids) + len(tombstones) != ids.size:
            problems.append("dense index holds a row id twice")
        if saved.spec.dense_kind is DenseKind.FLAT:
            problems.extend(_vector_problems(saved.index, embeddings))
    lexical_sequence, lexical_ids = _read_lexical(directory / "lexical")
    return DiskAgreement(
        store_sequence=sequence,
        documents=documents,
        chunks=chunks,
        dense_sequence=None if saved is None else saved.sequence,
        lexical_sequence=lexical_sequence,
        dense_ids=dense_ids,
        lexical_ids=lexical_ids,
        problems_found=problems,
    )


def _read_store(
    path: Path,
) -> tuple[int, dict[str, int], tuple[StoredChunk, ...], dict[int, np.ndarray]]:
    connection = sqlite3.connect(path)
    try:
        row = connection.execute(
            "SELECT seq FROM sqlite_sequence WHERE name = 'changes'"
        ).fetchone()
        documents = dict(connection.execute("SELECT document_id, chunk_count FROM documents"))
        rows = connection.execute(
            "SELECT row_id, chunk_id, document_id, ordinal, text, embedding FROM chunks "
            "ORDER BY row_id"
        ).fetchall()
    finally:
        connection.close()
    chunks = tuple(StoredChunk(int(r[0]), r[1], r[2], int(r[3]), r[4]) for r in rows)
    vectors = vectors_from_blobs([bytes(r[5]) for r in rows])
    embeddings = {chunk.row_id: vectors[i] for i, chunk in enumerate(chunks)}
    return (0 if row is None else int(row[0])), documents, chunks, embeddings


def _vector_problems(index: faiss.Index, embeddings: dict[int, np.ndarray]) -> list[str]:
    ids, vectors = id_map_contents(index)
    wrong = [
        int(row_id)
        for row_id, vector in zip(ids.tolist(), vectors, strict=True)
        if row_id in embeddings and not np.allclose(vector, embeddings[row_id], atol=1e-6)
    ]
    return (
        [f"dense vectors differ from the stored embeddings for row ids {wrong[:10]}"]
        if wrong
        else []
    )


def _read_lexical(directory: Path) -> tuple[int, frozenset[int]]:
    sequence_file = directory / "sequence.json"
    sequence = (
        int(json.loads(sequence_file.read_text())["sequence"]) if sequence_file.exists() else 0
    )
    index = tantivy.Index.open(str(directory / "index"))
    searcher = index.searcher()
    if searcher.num_docs == 0:
        return sequence, frozenset()
    hits = searcher.search(tantivy.Query.all_query(), limit=searcher.num_docs).hits
    values = searcher.fast_field_values("row_id", [address for _, address in hits])
    return sequence, frozenset(int(v) for v in values if v is not None)
