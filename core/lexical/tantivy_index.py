"""`TantivyIndex`: BM25 search over chunk text, title and section path, keyed by store row id.

Layout of the directory: `index/` holds the Tantivy index, `sequence.json` the store sequence
the last commit reflects (replaced atomically after the Tantivy commit). A crash between the
two leaves the index ahead of its recorded sequence; replay is still correct because `add`
first deletes any document with the same row id, making replays idempotent.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import tantivy

from core.lexical.query import sanitize_query
from core.store.atomic_file import write_atomic
from core.store.records import LexicalRow

logger = logging.getLogger(__name__)

INDEX_DIR = "index"
SEQUENCE_FILE = "sequence.json"
SEARCH_FIELDS = ["text", "title", "section"]
DEFAULT_FIELD = "text"
RELOAD_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class LexicalSettings:
    """Tuning of a `TantivyIndex`: extra field boosts, writer resources and the cap on query words.

    The section path (title first) is indexed as a header line inside `text`, the same text the
    dense side embeds, so one BM25 field scores it with the body. Searching `title` and `section`
    as separate fields (boost > 0) sums short-field BM25 scores, which overweights any document
    whose title shares a query word: on python-faq that dropped MRR@10 from 0.26 to 0.03. They
    are therefore off (0.0) by default.
    """

    title_boost: float = 0.0
    section_boost: float = 0.0
    writer_heap_bytes: int = 50_000_000
    writer_threads: int = 1
    max_query_terms: int = 64


def build_schema() -> tantivy.Schema:
    """row_id (i64: indexed, stored, fast) plus English-stemmed text, title and section."""
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("row_id", stored=True, indexed=True, fast=True)
    for name in SEARCH_FIELDS:
        builder.add_text_field(name, stored=False, tokenizer_name="en_stem")
    return builder.build()


class TantivyIndex:
    """A lexical index for one collection. Writes are serialised by a lock; searches see the
    state of the last `commit` (or `clear`)."""

    remote = False
    """Searches run in this process (core.lexical.protocol)."""

    def __init__(
        self,
        directory: Path,
        index: tantivy.Index,
        settings: LexicalSettings,
        read_only: bool = False,
    ) -> None:
        self._directory = directory
        self._index = index
        self._settings = settings
        self._read_only = read_only
        self._writer: tantivy.IndexWriter | None = (
            None if read_only else index.writer(settings.writer_heap_bytes, settings.writer_threads)
        )
        self._sequence = _read_sequence(directory / SEQUENCE_FILE)
        self._lock = threading.RLock()
        self._boosts = {"title": settings.title_boost, "section": settings.section_boost}
        self._fields = [DEFAULT_FIELD, *(name for name, boost in self._boosts.items() if boost > 0)]

    @classmethod
    def open(cls, directory: Path, settings: LexicalSettings | None = None) -> TantivyIndex:
        """Open the index under `directory`, creating an empty one when missing."""
        index_dir = directory / INDEX_DIR
        index_dir.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(build_schema(), path=str(index_dir), reuse=True)
        return cls(directory, index, settings or LexicalSettings())

    @classmethod
    def open_read_only(
        cls, directory: Path, settings: LexicalSettings | None = None
    ) -> TantivyIndex:
        """Open the index another process writes, for searching only (no writer, no lock):
        `refresh` picks up that process's commits. FileNotFoundError until its first commit."""
        if not (directory / SEQUENCE_FILE).is_file():
            raise FileNotFoundError(f"{directory} holds no committed lexical index")
        index = tantivy.Index(build_schema(), path=str(directory / INDEX_DIR), reuse=True)
        follower = cls(directory, index, settings or LexicalSettings(), read_only=True)
        follower.refresh()
        return follower

    def refresh(self) -> int:
        """A read-only index: see the writer's last commit; the sequence it holds at least.

        The writer commits Tantivy before it replaces the sequence file, so reading the file
        first and reloading after gives searches at or past the sequence returned. A reload
        that meets segment files a merge just removed is retried."""
        sequence = _read_sequence(self._directory / SEQUENCE_FILE)
        for attempt in range(RELOAD_ATTEMPTS):
            try:
                self._index.reload()
                break
            except ValueError:
                if attempt == RELOAD_ATTEMPTS - 1:
                    raise
        with self._lock:
            self._sequence = max(self._sequence, sequence)
            return self._sequence

    @property
    def num_docs(self) -> int:
        """Committed, live documents."""
        return int(self._index.searcher().num_docs)

    def sequence(self) -> int:
        """The store sequence the last commit recorded; 0 for a new index."""
        return self._sequence

    def add(self, rows: Sequence[LexicalRow]) -> None:
        """Stage rows for the next commit, replacing any document with the same row id."""
        with self._lock:
            writer = self._open_writer()
            for row in rows:
                writer.delete_documents_by_term("row_id", row.row_id)
                document = tantivy.Document()
                document.add_integer("row_id", row.row_id)
                document.add_text("text", f"{row.section}\n{row.text}" if row.section else row.text)
                document.add_text("title", row.title)
                document.add_text("section", row.section)
                writer.add_document(document)

    def remove(self, row_ids: Sequence[int]) -> None:
        """Stage deletion of the given row ids for the next commit (unknown ids are ignored)."""
        with self._lock:
            writer = self._open_writer()
            for row_id in row_ids:
                writer.delete_documents_by_term("row_id", int(row_id))

    def clear(self) -> None:
        """Stage deletion of every document (for a rebuild); the next commit publishes it."""
        with self._lock:
            self._open_writer().delete_all_documents()

    def commit(self, sequence: int) -> None:
        """Publish staged changes, then durably record `sequence`; searches see them on return."""
        with self._lock:
            self._open_writer().commit()
            payload = json.dumps({"sequence": sequence}).encode("utf-8")
            write_atomic(self._directory / SEQUENCE_FILE, [payload])
            self._sequence = sequence
            self._index.reload()

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Up to k (row_id, BM25 score) pairs, best first. Never raises on user text."""
        text = sanitize_query(query, self._settings.max_query_terms)
        if not text or k < 1:
            return []
        try:
            boosts = {name: boost for name, boost in self._boosts.items() if boost > 0}
            parsed = self._index.parse_query(text, self._fields, field_boosts=boosts)
        except ValueError:
            logger.warning("lexical query could not be parsed after sanitising", exc_info=True)
            return []
        searcher = self._index.searcher()
        hits = searcher.search(parsed, limit=k, count=False).hits
        if not hits:
            return []
        row_ids = searcher.fast_field_values("row_id", [address for _, address in hits])
        return [
            (int(row_id), float(score))
            for (score, _), row_id in zip(hits, row_ids, strict=True)
            if row_id is not None
        ]

    def close(self) -> None:
        """Roll back anything uncommitted and release the writer (idempotent)."""
        with self._lock:
            if self._writer is not None:
                self._writer.rollback()
                self._writer = None  # dropping the last reference releases Tantivy's lock file

    def _open_writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            state = "read-only" if self._read_only else "closed"
            raise RuntimeError(f"lexical index {self._directory} is {state}")
        return self._writer


def _read_sequence(path: Path) -> int:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return 0
    return int(data["sequence"])
