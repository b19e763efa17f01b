"""SqliteStore on real database files: writes, replacement, deletes, change log, durability."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.models import ChunkDraft, Document, RiskLevel, SourceType
from core.store import EMBEDDING_DIM_KEY, LexicalRow, SqliteStore

DIM = 4


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "collection" / "store.sqlite3"


@pytest.fixture
def store(db_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore.open(db_path)
    yield opened
    opened.close()


def make_document(document_id: str, text: str = "body", **extra: str) -> Document:
    return Document(
        document_id=document_id,
        text=text,
        source_type=SourceType.MARKDOWN,
        source_path=f"docs/{document_id}.md",
        title=f"Title {document_id}",
        metadata=extra,
    )


def drafts(count: int, prefix: str = "chunk") -> list[ChunkDraft]:
    return [
        ChunkDraft(f"{prefix} {i}", ("Guide", f"Part {i}"), i % 2 == 1, 10 + i, i)
        for i in range(count)
    ]


def vectors(count: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)


def put(store: SqliteStore, document_id: str, count: int, text: str = "body") -> tuple[int, ...]:
    document = make_document(document_id, text)
    result = store.upsert_document(document, document.content_hash(), drafts(count), vectors(count))
    return result.added_row_ids


def test_open_creates_an_empty_wal_database(store: SqliteStore, db_path: Path) -> None:
    assert store.sequence() == 0
    assert store.counts() == (0, 0)
    assert store.changes_since(0) == []
    assert store.document_hash("missing") is None
    assert store.get_document("missing") is None
    with sqlite3.connect(db_path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_upsert_stores_document_chunks_and_one_change(store: SqliteStore) -> None:
    document = make_document("guide", "full text", team="docs")
    risk = [(("prompt_injection",), RiskLevel.HIGH), ((), RiskLevel.NONE)]
    result = store.upsert_document(document, "hash-1", drafts(2), vectors(2), risk)

    assert (result.seq, result.added_row_ids, result.removed_row_ids) == (1, (1, 2), ())
    assert store.document_hash("guide") == "hash-1"
    stored = store.get_document("guide")
    assert stored is not None
    assert (stored.text, stored.title, stored.source_path) == (
        "full text",
        "Title guide",
        "docs/guide.md",
    )
    assert stored.metadata == {"team": "docs"} and stored.updated_seq == 1
    first, second = stored.chunks
    assert (first.chunk_id, second.chunk_id) == ("guide#0", "guide#1")
    assert first.section_path == ("Guide", "Part 0") and second.has_code
    assert (first.risk_flags, first.risk_level) == (("prompt_injection",), RiskLevel.HIGH)
    assert second.risk_level is RiskLevel.NONE and second.page == 1
    chunks = store.get_chunks([2, 1, 99])
    assert sorted(chunks) == [1, 2]
    assert chunks[1].title == "Title guide" and chunks[1].metadata == {"team": "docs"}
    assert chunks[1].source_type is SourceType.MARKDOWN
    assert store.counts() == (1, 2)


def test_chunks_read_back_exactly_with_empty_and_unicode_fields(store: SqliteStore) -> None:
    document = Document("plain", "x", SourceType.HTML, "p.html", "Tïtle 東京", {"k": 'v "q"'})
    chunk_drafts = [
        ChunkDraft("no section", (), False, 2, 0),
        ChunkDraft("deep", ("Ä", "", "[]", "{}"), True, 1, 3),
    ]
    risk = [((), RiskLevel.NONE), (("oversized", "suspicious_link"), RiskLevel.MEDIUM)]
    store.upsert_document(document, "h", chunk_drafts, vectors(2), risk)
    bare = make_document("bare")
    store.upsert_document(bare, "h2", [ChunkDraft("b", ("S",), False, 1, 0)], vectors(1))
    chunks = store.get_chunks([1, 2, 3])
    assert chunks[1].section_path == () and chunks[1].risk_flags == ()
    assert chunks[2].section_path == ("Ä", "", "[]", "{}") and chunks[2].has_code is True
    assert chunks[2].risk_flags == ("oversized", "suspicious_link")
    assert chunks[2].risk_level is RiskLevel.MEDIUM and chunks[2].page == 3
    assert chunks[1].source_type is SourceType.HTML and chunks[1].title == "Tïtle 東京"
    assert chunks[1].metadata == {"k": 'v "q"'} and chunks[3].metadata == {}
    assert [type(chunks[2].row_id), type(chunks[2].token_estimate)] == [int, int]
    stored = store.get_document("plain")
    assert stored is not None and list(stored.chunks) == [chunks[1], chunks[2]]


def test_upsert_replaces_every_old_chunk(store: SqliteStore) -> None:
    old = put(store, "guide", 3)
    document = make_document("guide", "v2")
    result = store.upsert_document(document, "hash-2", drafts(2, "new"), vectors(2, seed=1))

    assert result.removed_row_ids == old == (1, 2, 3)
    assert result.added_row_ids == (4, 5) and result.seq == 2
    assert store.get_chunks(old) == {}
    assert [c.text for c in store.get_chunks(result.added_row_ids).values()] == ["new 0", "new 1"]
    assert store.counts() == (1, 2)


def test_unchanged_hash_is_visible_so_callers_can_skip(store: SqliteStore) -> None:
    document = make_document("guide", "same")
    store.upsert_document(document, document.content_hash(), drafts(1), vectors(1))
    assert store.document_hash("guide") == make_document("guide", "same").content_hash()
    assert store.document_hash("guide") != make_document("guide", "edited").content_hash()
    assert store.sequence() == 1


def test_delete_documents_reports_deleted_and_missing(store: SqliteStore) -> None:
    a_rows = put(store, "a", 2)
    put(store, "b", 1)
    result = store.delete_documents(["a", "ghost", "a"])

    assert result.deleted == ("a",) and result.not_found == ("ghost",)
    assert result.removed_row_ids == a_rows and result.seq == 3
    assert store.get_document("a") is None and store.get_chunks(a_rows) == {}
    assert store.counts() == (1, 1)
    nothing = store.delete_documents(["ghost"])
    assert (nothing.seq, nothing.deleted, nothing.removed_row_ids) == (3, (), ())


def test_changes_since_replays_in_order(store: SqliteStore) -> None:
    first = put(store, "a", 2)
    second = put(store, "a", 1)
    store.delete_documents(["a"])

    changes = store.changes_since(0)
    assert [(c.seq, c.op, c.document_id) for c in changes] == [
        (1, "upsert", "a"),
        (2, "upsert", "a"),
        (3, "delete", "a"),
    ]
    assert (changes[0].added_row_ids, changes[0].removed_row_ids) == (first, ())
    assert (changes[1].added_row_ids, changes[1].removed_row_ids) == (second, first)
    assert (changes[2].added_row_ids, changes[2].removed_row_ids) == ((), second)
    assert [c.seq for c in store.changes_since(2)] == [3]
    assert store.changes_since(3) == [] and store.sequence() == 3


def test_reopen_keeps_everything(db_path: Path) -> None:
    with SqliteStore.open(db_path) as first:
        rows = put(first, "guide", 3)
        first.set_meta("model", "minilm")
    with SqliteStore.open(db_path) as second:
        assert second.sequence() == 1 and second.counts() == (1, 3)
        assert second.get_meta("model") == "minilm"
        ids, matrix = second.get_vectors(rows)
        np.testing.assert_array_equal(ids, rows)
        np.testing.assert_array_equal(matrix, vectors(3))


def test_acknowledged_upsert_survives_a_crash(db_path: Path) -> None:
    script = f"""
import os, numpy as np
from pathlib import Path
from core.models import ChunkDraft, Document
from core.store import SqliteStore
store = SqliteStore.open(Path({str(db_path)!r}))
store.upsert_document(Document("d", "t"), "h", [ChunkDraft("c")], np.ones((1, 4), np.float32))
os._exit(0)  # no close, no checkpoint
"""
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).parents[2])
    with SqliteStore.open(db_path) as reopened:
        assert reopened.document_hash("d") == "h" and reopened.counts() == (1, 1)


def test_row_ids_are_never_reused(db_path: Path) -> None:
    with SqliteStore.open(db_path) as store:
        first = put(store, "a", 3)
        store.delete_documents(["a"])
    with SqliteStore.open(db_path) as store:
        again = put(store, "a", 3)
    assert min(again) > max(first)
    assert set(again).isdisjoint(first)


def test_failed_upsert_rolls_back_completely(store: SqliteStore) -> None:
    rows = put(store, "guide", 2)
    bad = [ChunkDraft("ok"), ChunkDraft(None)]  # type: ignore[arg-type]
    with pytest.raises(sqlite3.IntegrityError):
        store.upsert_document(make_document("guide", "v2"), "h2", bad, vectors(2))
    assert sorted(store.get_chunks(rows)) == list(rows)
    assert store.sequence() == 1 and store.counts() == (1, 2)


def test_embedding_shape_and_pinned_dimension_are_checked(store: SqliteStore) -> None:
    document = make_document("guide")
    with pytest.raises(ValueError, match=r"^embeddings must have shape \(2, d\), got \(3, 4\)$"):
        store.upsert_document(document, "h", drafts(2), vectors(3))
    with pytest.raises(ValueError, match="^risk has 1 entries for 2 chunks$"):
        store.upsert_document(document, "h", drafts(2), vectors(2), [((), RiskLevel.LOW)])
    store.set_meta(EMBEDDING_DIM_KEY, "8")
    with pytest.raises(ValueError, match="^embeddings have dimension 4, the collection expects 8$"):
        store.upsert_document(document, "h", drafts(2), vectors(2))
    assert store.sequence() == 0


def test_document_without_chunks(store: SqliteStore) -> None:
    result = store.upsert_document(make_document("empty"), "h", [], np.zeros((0, DIM), np.float32))
    assert result.added_row_ids == () and store.counts() == (1, 0)


def test_iterators_cover_live_rows_in_batches(store: SqliteStore) -> None:
    put(store, "a", 3)
    replaced = put(store, "b", 2)
    snapshot = store.sequence()
    put(store, "b", 2)  # replaces b after the snapshot
    put(store, "c", 1)

    batches = list(store.iter_live_vectors(batch_size=2))
    ids = np.concatenate([batch_ids for batch_ids, _ in batches])
    assert [len(b) for b, _ in batches] == [2, 2, 2] and ids.tolist() == [1, 2, 3, 6, 7, 8]
    assert all(m.shape == (len(b), DIM) and m.dtype == np.float32 for b, m in batches)
    before = np.concatenate([b for b, _ in store.iter_live_vectors(max_seq=snapshot)])
    assert before.tolist() == [1, 2, 3]  # b's old rows are gone, its new ones came later
    assert replaced == (4, 5)

    rows = [row for batch in store.iter_live_texts(batch_size=4) for row in batch]
    assert [row.row_id for row in rows] == [1, 2, 3, 6, 7, 8]
    assert rows[0] == LexicalRow(1, "chunk 0", "Title a", "Guide / Part 0")
    assert store.get_lexical_rows([8, 1, 4]) == [rows[0], rows[-1]]
    with pytest.raises(ValueError, match="^batch_size must be >= 1, got 0$"):
        list(store.iter_live_texts(batch_size=0))


def test_meta_set_overwrite_and_missing(store: SqliteStore) -> None:
    assert store.get_meta("model") is None
    store.set_meta("model", "a")
    store.set_meta("model", "b")
    assert store.get_meta("model") == "b"


def test_concurrent_writers_are_serialised(store: SqliteStore) -> None:
    def write(worker: int) -> None:
        for i in range(10):
            put(store, f"w{worker}-{i}", 2)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.sequence() == 40 and store.counts() == (40, 80)
    assert [c.seq for c in store.changes_since(0)] == list(range(1, 41))


def test_cached_chunks_never_outlive_their_rows(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.store.sqlite_store.CHUNK_CACHE_SIZE", 3)
    first = put(store, "guide", 2)
    other = put(store, "other", 2)
    assert sorted(store.get_chunks([*first, *other])) == [*first, *other]  # cached (3 kept)
    document = make_document("guide", "v2", team="new")
    replaced = store.upsert_document(document, "h2", drafts(2, "new"), vectors(2)).added_row_ids
    again = store.get_chunks([*first, *replaced])
    assert sorted(again) == list(replaced)  # the replaced rows are gone, not served from memory
    assert {c.text for c in again.values()} == {"new 0", "new 1"}
    assert all(c.metadata == {"team": "new"} for c in again.values())
    store.delete_documents(["other"])
    assert store.get_chunks(other) == {}
    # a fresh read of the same rows decodes to equal chunks
    cached = store.get_chunks(replaced)
    reopened = SqliteStore.open(store.path)
    assert reopened.get_chunks(replaced) == cached
    reopened.close()
    assert len(store._chunks) <= 3


def test_risk_levels_are_those_of_live_rows_and_never_outlive_them(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.store.sqlite_store.RISK_CACHE_SIZE", 3)
    document = make_document("guide")
    levels = [RiskLevel.NONE, RiskLevel.HIGH, RiskLevel.LOW]
    risky = store.upsert_document(
        document, "h1", drafts(3), vectors(3), risk=[(("flag",), level) for level in levels]
    ).added_row_ids
    other = put(store, "other", 2)
    found = store.get_risk_levels([*risky, *other, 999, risky[0]])
    assert found == {
        **dict(zip(risky, levels, strict=True)),
        **dict.fromkeys(other, RiskLevel.NONE),
    }
    chunks = store.get_chunks([*risky, *other])
    assert found == {row_id: chunk.risk_level for row_id, chunk in chunks.items()}
    assert store.get_risk_levels(other) == dict.fromkeys(other, RiskLevel.NONE)  # cached
    assert len(store._risks) <= 3
    replaced = store.upsert_document(document, "h2", drafts(1), vectors(1)).added_row_ids
    assert store.get_risk_levels([*risky, *replaced]) == {replaced[0]: RiskLevel.NONE}
    store.delete_documents(["other"])
    assert store.get_risk_levels(other) == {}  # cached before the delete, not served after it


def test_a_reader_forgets_the_risk_levels_of_rows_another_process_deleted(
    store: SqliteStore, db_path: Path
) -> None:
    rows = put(store, "guide", 2)
    reader = SqliteStore.open_existing(db_path)
    try:
        assert reader.get_risk_levels(rows) == dict.fromkeys(rows, RiskLevel.NONE)
        removed = store.delete_documents(["guide"]).removed_row_ids
        reader.forget_rows(removed)
        assert reader.get_risk_levels(rows) == {}
        again = put(store, "again", 1)
        assert reader.get_risk_levels(again) == {again[0]: RiskLevel.NONE}
        store.delete_documents(["again"])
        reader.forget_all_rows()  # a pruned change log: every cached row forgotten
        assert reader.get_risk_levels(again) == {}
    finally:
        reader.close()
