"""`SqliteStore`: the durable source of truth of one collection (documents, chunks, change log)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import numpy as np

from core.models import Chunk, ChunkDraft, Document, Edge, RiskLevel
from core.store import link_graph, schema, writes
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

__all__ = [
    "EMBEDDING_DIM_KEY",
    "Change",
    "ChunkRisk",
    "DeleteResult",
    "LexicalRow",
    "SqliteStore",
    "StoredDocument",
    "UpsertResult",
]

EMBEDDING_DIM_KEY = "embedding_dim"
"""Meta key that, once set, pins the width every stored embedding must have."""

_ID_BATCH = 500  # bound on bound parameters per `IN (...)` query
CHUNK_CACHE_SIZE = 8192
"""Decoded chunks kept per store (~1.3 KB each on python-faq, ~10 MB full). A row never changes
once written (an upsert deletes the old rows and inserts new ids; AUTOINCREMENT never reuses one),
so an entry stays right until its row is deleted, and deletes evict it in the same locked
transaction. Sized for the candidates of a full corpus's query set: the 172 python-faq questions
read ~7,400 distinct chunks at full size (dense + BM25 top 50), which 4,096 entries thrashed
(0.67 ms of SQLite reads per query against 0.03 ms, benchmarks/retrieve/hot_path.py)."""
RISK_CACHE_SIZE = 65536
"""Risk levels kept per store, by chunk row id (~0.1 KB each, ~7 MB full): what the query path
reads of every candidate that no filter needs more of (`get_risk_levels`). Eight times the chunk
cache, as an entry is a hundredth of a decoded chunk: the candidates of a large corpus's query
set fit. A chunk's risk level is written with the row and never changes, so the chunk cache's
eviction keeps every entry right."""
SECTION_CACHE_SIZE = 8192
"""Section vectors kept per store, by chunk row id (~1.8 KB each at d=384, ~15 MB full). A chunk's
section vector is written in the transaction that inserts the chunk and never changes while the
row lives, so the same eviction as the chunk cache keeps every entry right."""


class SqliteStore:
    """One collection's SQLite database (WAL, synchronous=FULL, foreign keys on).

    Thread-safe: a single connection guarded by a re-entrant lock. Every write is one
    transaction and is durable when the method returns. Row ids come from AUTOINCREMENT and are
    never reused, so the derived indexes can key on them.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self._path = path
        self._lock = threading.RLock()
        self._edge_count: tuple[int, int] | None = None  # (sequence, edges), under _lock
        self._chunks: OrderedDict[int, Chunk] = OrderedDict()  # LRU by row id, under _lock
        self._sections: OrderedDict[int, np.ndarray] = OrderedDict()  # the same, (d,) vectors
        self._risks: OrderedDict[int, RiskLevel] = OrderedDict()  # the same, risk levels

    @classmethod
    def open(cls, path: Path) -> SqliteStore:
        """Open (creating file and schema when missing) the database at `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        connection.row_factory = sqlite3.Row
        for pragma in schema.PRAGMAS:
            connection.execute(pragma)
        with connection:
            schema.create_schema(connection)
        return cls(connection, path)

    @classmethod
    def open_existing(cls, path: Path) -> SqliteStore:
        """Open the database another process writes (WAL lets it read while that one writes):
        never creates the file or its schema; FileNotFoundError when there is none."""
        try:
            connection = sqlite3.connect(
                f"{path.absolute().as_uri()}?mode=rw",
                uri=True,
                check_same_thread=False,
                isolation_level=None,
            )
        except sqlite3.OperationalError:
            raise FileNotFoundError(f"{path} does not exist") from None
        connection.row_factory = sqlite3.Row
        for pragma in schema.PRAGMAS:
            connection.execute(pragma)
        return cls(connection, path)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    def close(self) -> None:
        """Close the connection; the store is unusable afterwards."""
        with self._lock:
            self._connection.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")

    # ---- writes -----------------------------------------------------------------------------

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
        """Replace `document` and all its chunks in one transaction.

        `embeddings`: float32 (len(chunks), d), row i belonging to chunks[i]. `risk`, when given,
        holds (flags, level) per chunk. `links`: the document's link-graph rows, extracted
        beforehand (`core.ingest.link_rows`); none by default. `sections`: one vector per
        section path of `chunks` (replacing the document's old ones), or none. Chunk ids are
        `chunk_id_for(document_id, ordinal)`. Collections call this from `Collection.commit`.
        """
        matrix = self._checked_embeddings(embeddings, len(chunks))
        section_matrix = self._checked_sections(sections, chunks, matrix)
        risks = list(risk) if risk is not None else [((), RiskLevel.NONE)] * len(chunks)
        if len(risks) != len(chunks):
            raise ValueError(f"risk has {len(risks)} entries for {len(chunks)} chunks")
        with self._transaction() as db:
            removed = writes.delete_chunks(db, document.document_id)
            self._forget_chunks(removed)
            seq = writes.append_change(db, "upsert", document.document_id)
            writes.write_document(db, document, content_hash, len(chunks), seq)
            added = [
                writes.insert_chunk(db, document.document_id, ordinal, draft, vector, flags, seq)
                for ordinal, (draft, vector, flags) in enumerate(
                    zip(chunks, matrix, risks, strict=True)
                )
            ]
            writes.finish_change(db, seq, added, removed)
            link_graph.write_links(db, document.document_id, added, links)
            writes.replace_sections(db, document.document_id, sections.paths, section_matrix)
        return UpsertResult(seq=seq, added_row_ids=tuple(added), removed_row_ids=tuple(removed))

    def delete_documents(self, document_ids: Sequence[str]) -> DeleteResult:
        """Delete the named documents and their chunks in one transaction (one change each)."""
        deleted: list[str] = []
        not_found: list[str] = []
        removed_all: list[int] = []
        with self._transaction() as db:
            for document_id in dict.fromkeys(document_ids):
                if (
                    db.execute(
                        "SELECT 1 FROM documents WHERE document_id = ?", (document_id,)
                    ).fetchone()
                    is None
                ):
                    not_found.append(document_id)
                    continue
                removed = writes.delete_chunks(db, document_id)
                self._forget_chunks(removed)
                db.execute("DELETE FROM documents WHERE document_id = ?", (document_id,))
                seq = writes.append_change(db, "delete", document_id)
                writes.finish_change(db, seq, [], removed)
                deleted.append(document_id)
                removed_all.extend(removed)
            seq = _sequence(db)
        return DeleteResult(seq, tuple(deleted), tuple(not_found), tuple(removed_all))

    def set_meta(self, key: str, value: str) -> None:
        """Set one collection setting (durable on return)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def replace_embeddings(
        self,
        row_ids: np.ndarray,
        embeddings: np.ndarray,
        meta: Mapping[str, str],
        sections: Sequence[tuple[str, SectionVectors]] = (),
    ) -> None:
        """Overwrite the stored vector of each chunk `row_ids` (int64 (n,)) with `embeddings`
        (float32 (n, d)), replace the section vectors of each (document id, vectors) of
        `sections` and set the `meta` keys, in one transaction; the sequence does not move (a
        re-embedding with another model, core/tune). ValueError (nothing written) when a row id
        or document is not live or a section block does not fit. The section-vector LRU is
        emptied in the same locked transaction, so no vector read before it is served after."""
        matrix = self._checked_embeddings(embeddings, len(row_ids))
        width = matrix.shape[1] if len(row_ids) else None
        blocks = [(d, v, _checked_section_block(d, v, width)) for d, v in sections]
        with self._transaction() as db:
            for row_id, vector in zip(row_ids, matrix, strict=True):
                cursor = db.execute(
                    "UPDATE chunks SET embedding = ? WHERE row_id = ?",
                    (vector.tobytes(), int(row_id)),
                )
                if cursor.rowcount != 1:
                    raise ValueError(f"chunk row {int(row_id)} is not live")
            for document_id, vectors, block in blocks:
                if self._live_paths(db, document_id) != set(vectors.paths):
                    raise ValueError(
                        f"document {document_id!r} is not live or its chunks' section paths "
                        "differ from the section vectors given"
                    )
                writes.replace_sections(db, document_id, vectors.paths, block)
            for key, value in meta.items():
                db.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
            self._sections.clear()

    @staticmethod
    def _live_paths(db: sqlite3.Connection, document_id: str) -> set[tuple[str, ...]]:
        """The distinct section paths of a document's live chunks (empty when it has none)."""
        rows = db.execute(
            "SELECT DISTINCT section_path_json FROM chunks WHERE document_id = ?", (document_id,)
        ).fetchall()
        return {tuple(json.loads(str(row[0]))) for row in rows}

    def _checked_embeddings(self, embeddings: np.ndarray, count: int) -> np.ndarray:
        if count == 0:
            return np.zeros((0, 0), dtype=np.float32)
        matrix = np.ascontiguousarray(embeddings, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != count:
            raise ValueError(f"embeddings must have shape ({count}, d), got {matrix.shape}")
        pinned = self.get_meta(EMBEDDING_DIM_KEY)
        if pinned is not None and int(pinned) != matrix.shape[1]:
            raise ValueError(
                f"embeddings have dimension {matrix.shape[1]}, the collection expects {pinned}"
            )
        return matrix

    def _checked_sections(
        self, sections: SectionVectors, chunks: Sequence[ChunkDraft], chunk_matrix: np.ndarray
    ) -> np.ndarray:
        """`sections.vectors` as float32 (n, d) after checking they fit `chunks`: none at all, or
        exactly one per distinct section path, as wide as the chunk vectors."""
        if not sections.paths:
            return np.zeros((0, 0), dtype=np.float32)
        wanted = list(dict.fromkeys(tuple(c.section_path) for c in chunks))
        if sorted(sections.paths) != sorted(wanted) or len(set(sections.paths)) != len(wanted):
            raise ValueError(
                f"sections name {len(sections.paths)} paths; the chunks have {len(wanted)} "
                "distinct section paths and need exactly one vector each"
            )
        matrix = np.ascontiguousarray(sections.vectors, dtype=np.float32)
        width = chunk_matrix.shape[1]
        if matrix.shape != (len(wanted), width):
            raise ValueError(
                f"section vectors must have shape ({len(wanted)}, {width}), got {matrix.shape}"
            )
        return matrix

    # ---- reads ------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """One collection setting, or None when unset."""
        with self._lock:
            row = self._connection.execute(
                "SELECT value FROM meta WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else str(row[0])

    def document_hash(self, document_id: str) -> str | None:
        """The stored content hash of a document, or None when it is not stored."""
        with self._lock:
            row = self._connection.execute(
                "SELECT content_hash FROM documents WHERE document_id = ?", (document_id,)
            ).fetchone()
        return None if row is None else str(row[0])

    def get_document(self, document_id: str) -> StoredDocument | None:
        """A stored document with its chunks in ordinal order, or None."""
        with self._lock:
            doc = self._connection.execute(
                "SELECT * FROM documents WHERE document_id = ?", (document_id,)
            ).fetchone()
            if doc is None:
                return None
            rows = self._connection.execute(
                f"{schema.CHUNK_SELECT} WHERE c.document_id = ? ORDER BY c.ordinal", (document_id,)
            ).fetchall()
        return schema.document_from_rows(doc, rows)

    def get_chunks(self, row_ids: Sequence[int]) -> dict[int, Chunk]:
        """Live chunks by row id (with their document's title and metadata); unknown ids absent.

        Recently read chunks come from an LRU of CHUNK_CACHE_SIZE decoded chunks (the query path
        reads the same popular chunks again and again); the rest from one query.
        """
        found: dict[int, Chunk] = {}
        missing: list[int] = []
        with self._lock:
            for row_id in dict.fromkeys(int(i) for i in row_ids):
                chunk = self._chunks.get(row_id)
                if chunk is None:
                    missing.append(row_id)
                else:
                    self._chunks.move_to_end(row_id)
                    found[row_id] = chunk
            if missing:
                rows = self._rows_by_id(schema.CHUNK_SELECT + " WHERE c.row_id IN ({})", missing)
                for row in rows:
                    chunk = schema.chunk_from_row(row)
                    found[chunk.row_id] = self._chunks[chunk.row_id] = chunk
                while len(self._chunks) > CHUNK_CACHE_SIZE:
                    self._chunks.popitem(last=False)
        return found

    def get_risk_levels(self, row_ids: Sequence[int]) -> dict[int, RiskLevel]:
        """The risk level of each live chunk among `row_ids`; unknown or deleted ids are absent.

        What the query path reads of every candidate when its filters need no other field:
        recently read levels come from an LRU of RISK_CACHE_SIZE, the rest from one query of two
        integer columns by primary key (no join, no text, nothing decoded).
        """
        found: dict[int, RiskLevel] = {}
        missing: list[int] = []
        with self._lock:
            cached = self._risks
            for row_id in dict.fromkeys(int(i) for i in row_ids):
                level = cached.get(row_id)
                if level is None:
                    missing.append(row_id)
                else:
                    cached.move_to_end(row_id)
                    found[row_id] = level
            if missing:
                levels = schema.RISK_LEVELS
                for row_id, value in self._rows_by_id(_RISK_SELECT, missing):
                    found[row_id] = cached[row_id] = levels[value]
                while len(cached) > RISK_CACHE_SIZE:
                    cached.popitem(last=False)
        return found

    def forget_rows(self, row_ids: Sequence[int]) -> None:
        """Drop rows another process deleted from the chunk, section and risk-level caches (a
        follower calls it with the removed row ids of each change it applies)."""
        with self._lock:
            self._forget_chunks(row_ids)

    def forget_all_rows(self) -> None:
        """Empty the row caches (a follower whose change log was pruned)."""
        with self._lock:
            self._chunks.clear()
            self._sections.clear()
            self._risks.clear()

    def _forget_chunks(self, row_ids: Sequence[int]) -> None:
        """Drop deleted rows from the row caches (under `_lock`, inside the deleting write)."""
        for row_id in row_ids:
            self._chunks.pop(row_id, None)
            self._sections.pop(row_id, None)
            self._risks.pop(row_id, None)

    def get_vectors(self, row_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Embeddings of the live chunks among `row_ids` by ascending row id.

        Returns (int64 (n,), float32 (n, d)).
        """
        rows = self._rows_by_id(
            "SELECT row_id, embedding FROM chunks WHERE row_id IN ({})", row_ids
        )
        rows.sort(key=lambda row: int(row[0]))
        ids = np.array([int(row[0]) for row in rows], dtype=np.int64)
        return ids, schema.vectors_from_blobs([bytes(row[1]) for row in rows])

    def get_section_vectors(self, row_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The section vector of each live chunk among `row_ids` that has one, by ascending row
        id: (int64 (n,) chunk row ids, float32 (n, d)). Chunks of documents written without
        section vectors are absent.

        Recently read vectors come from an LRU of SECTION_CACHE_SIZE (every query rescores its
        dense candidates, mostly the same popular chunks); the rest from one query.
        """
        found: dict[int, np.ndarray] = {}
        missing: list[int] = []
        with self._lock:
            for row_id in dict.fromkeys(int(i) for i in row_ids):
                vector = self._sections.get(row_id)
                if vector is None:
                    missing.append(row_id)
                else:
                    self._sections.move_to_end(row_id)
                    found[row_id] = vector
            if missing:
                rows = self._rows_by_id(_SECTION_SELECT + " WHERE c.row_id IN ({})", missing)
                for row in rows:
                    vector = np.frombuffer(bytes(row[1]), dtype=np.float32)
                    found[int(row[0])] = self._sections[int(row[0])] = vector
                while len(self._sections) > SECTION_CACHE_SIZE:
                    self._sections.popitem(last=False)
        ids = np.array(sorted(found), dtype=np.int64)
        if not len(ids):
            return ids, schema.vectors_from_blobs([])
        return ids, np.stack([found[int(row_id)] for row_id in ids])

    def get_lexical_rows(self, row_ids: Sequence[int]) -> list[LexicalRow]:
        """Lexical rows of the live chunks among `row_ids`, ascending by row id."""
        rows = self._rows_by_id(_LEXICAL_SELECT + " WHERE c.row_id IN ({})", row_ids)
        return sorted((schema.lexical_row(row) for row in rows), key=lambda r: r.row_id)

    def iter_live_vectors(
        self, batch_size: int = 4096, max_seq: int | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """All live embeddings in row-id order, in batches: (int64 (n,), float32 (n, d)).

        With `max_seq`, only chunks written at or before that sequence are yielded; a consistent
        rebuild takes `max_seq = sequence()` first and then replays `changes_since(max_seq)`.
        """
        for rows in self._iter_live("row_id, embedding", "", batch_size, max_seq):
            ids = np.array([int(row[0]) for row in rows], dtype=np.int64)
            yield ids, schema.vectors_from_blobs([bytes(row[1]) for row in rows])

    def iter_live_texts(
        self, batch_size: int = 4096, max_seq: int | None = None
    ) -> Iterator[list[LexicalRow]]:
        """All live chunks as `LexicalRow`s by row id, in batches; `max_seq` as for vectors."""
        columns = "c.row_id, c.text, c.section_path_json, d.title"
        join = "JOIN documents d USING (document_id)"
        for rows in self._iter_live(columns, join, batch_size, max_seq):
            yield [schema.lexical_row(row) for row in rows]

    def changes_since(self, seq: int) -> list[Change]:
        """Every change with a sequence number greater than `seq`, ascending."""
        with self._lock:
            rows = self._connection.execute(
                "SELECT seq, op, document_id, row_ids_json FROM changes WHERE seq > ? ORDER BY seq",
                (seq,),
            ).fetchall()
        return [schema.change_from_row(row) for row in rows]

    def sequence(self) -> int:
        """The last change sequence number; 0 for a store that never changed."""
        with self._lock:
            return _sequence(self._connection)

    def edges_from(self, row_ids: Sequence[int]) -> dict[int, list[Edge]]:
        """Link-graph edges leaving the live chunks among `row_ids`, to live chunks only.

        Every live id is a key (with an empty list when it has no edge); deleted and unknown ids
        are absent. Lists are ordered by weight (highest first), kind, then target row id. See
        `link_graph` for how links resolve and what the weights are.
        """
        with self._lock:
            return link_graph.edges_from(self._connection, row_ids)

    def edge_count(self) -> int:
        """The number of link-graph edges between live chunks (links, next and prev).

        Counting resolves every stored link, so the count is kept with the sequence it was taken
        at and only recounted after a write (Stats polled in a loop costs one lookup).
        """
        with self._lock:
            sequence = _sequence(self._connection)
            if self._edge_count is None or self._edge_count[0] != sequence:
                self._edge_count = (sequence, link_graph.edge_count(self._connection))
            return self._edge_count[1]

    def counts(self) -> tuple[int, int]:
        """(number of documents, number of live chunks)."""
        with self._lock:
            documents = self._connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
            chunks = self._connection.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return int(documents), int(chunks)

    def _rows_by_id(self, template: str, row_ids: Sequence[int]) -> list[sqlite3.Row]:
        unique = list(dict.fromkeys(int(i) for i in row_ids))
        rows: list[sqlite3.Row] = []
        with self._lock:
            for start in range(0, len(unique), _ID_BATCH):
                batch = unique[start : start + _ID_BATCH]
                sql = template.format(", ".join("?" * len(batch)))
                rows.extend(self._connection.execute(sql, batch).fetchall())
        return rows

    def _iter_live(
        self, columns: str, join: str, batch_size: int, max_seq: int | None
    ) -> Iterator[list[sqlite3.Row]]:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        bound = (1 << 62) if max_seq is None else max_seq
        sql = (
            f"SELECT {columns} FROM chunks c {join} WHERE c.row_id > ? AND c.seq <= ? "
            "ORDER BY c.row_id LIMIT ?"
        )
        last = 0
        while True:
            with self._lock:  # released between batches so writers are not starved
                rows = self._connection.execute(sql, (last, bound, batch_size)).fetchall()
            if not rows:
                return
            yield rows
            last = int(rows[-1][0])


_SECTION_SELECT = (
    "SELECT c.row_id, s.embedding FROM chunks c JOIN sections s "
    "ON s.document_id = c.document_id AND s.section_path_json = c.section_path_json"
)
_RISK_SELECT = "SELECT row_id, risk_level FROM chunks WHERE row_id IN ({})"
_LEXICAL_SELECT = (
    "SELECT c.row_id, c.text, c.section_path_json, d.title "
    "FROM chunks c JOIN documents d USING (document_id)"
)


def _checked_section_block(
    document_id: str, sections: SectionVectors, width: int | None
) -> np.ndarray:
    """`sections.vectors` as float32 (len(paths), d) after checking the paths are distinct and
    the width is the chunk vectors' (`width`; None: any)."""
    paths = sections.paths
    matrix = np.ascontiguousarray(sections.vectors, dtype=np.float32)
    wanted = (len(paths), matrix.shape[-1] if width is None else width)
    if len(set(paths)) != len(paths) or matrix.ndim != 2 or matrix.shape != wanted:
        raise ValueError(
            f"section vectors of {document_id!r} must be one per distinct path, shape {wanted}; "
            f"got {len(paths)} paths and shape {matrix.shape}"
        )
    return matrix


def _sequence(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").fetchone()
    return 0 if row is None else int(row[0])
