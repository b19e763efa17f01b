"""A read-only `FollowingCollection` follows the writes of the `Collection` that owns the files:
upserts, deletes (never served again, not even from the store's chunk or risk-level cache), a lexical commit
lagging the store, drop and re-create (FollowerBackend.is_current). The writer's own version
never names a write whose indexes are not committed yet."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from core.catalog.collection import Collection
from core.catalog.follower_backend import FollowerBackend
from core.catalog.following_collection import FollowingCollection
from core.catalog.version import CollectionVersion
from core.dense.faiss_index import FaissIndex
from core.errors import FailedPrecondition
from tests.unit.collection_support import (
    AUTO_THRESHOLD,
    MARKER,
    dense_row_ids,
    open_collection,
    prepared,
    store_row_ids,
    vectors_for,
)


def _follower(directory: Path) -> FollowingCollection:
    return FollowingCollection.open_following(directory.name, directory, "cpu")


def _lexical_rows(collection: FollowingCollection) -> set[int]:
    return {row for row, _ in collection.lexical_search(MARKER, 100)}


def _dense_rows(collection: FollowingCollection) -> set[int]:
    query = vectors_for("a", 1, 0)
    _, ids = collection.dense_search(query, 100)
    return {int(i) for i in ids[0] if i >= 0}


def test_follower_applies_upserts_and_deletes_and_evicts_cached_chunks(tmp_path: Path) -> None:
    writer = open_collection(tmp_path / "c")
    writer.commit([prepared("a"), prepared("b")])
    follower = _follower(tmp_path / "c")
    try:
        rows = _dense_rows(follower)
        assert len(rows) == 6 and _lexical_rows(follower) == rows
        assert len(follower.get_chunks(sorted(rows))) == 6  # now in the chunk cache
        assert len(follower.get_risk_levels(sorted(rows))) == 6  # and in the risk-level cache
        before = follower.version()

        writer.delete_documents(["a"])
        writer.commit([prepared("c", count=2)])
        follower.catch_up()

        live = _dense_rows(follower)
        assert len(live) == 5 and _lexical_rows(follower) == live
        assert set(follower.get_chunks(sorted(rows))) == rows & live  # "a" evicted
        assert set(follower.get_risk_levels(sorted(rows))) == rows & live
        assert {c.document_id for c in follower.get_chunks(sorted(live)).values()} == {"b", "c"}
        assert follower.version() == writer.version()
        assert before.is_older_than(follower.version())
    finally:
        follower.close()
        writer.close()


def test_version_names_the_lexical_sequence_while_its_commit_lags(tmp_path: Path) -> None:
    writer = open_collection(tmp_path / "c")
    writer.commit([prepared("a")])
    follower = _follower(tmp_path / "c")
    try:
        at = follower.version()
        # the store commits first; the writer's index commit has not happened yet
        writer.store.upsert_document(
            prepared("b").document,
            prepared("b").content_hash,
            prepared("b").chunks,
            prepared("b").embeddings,
            prepared("b").risks,
        )
        follower.catch_up()
        assert follower.store.sequence() == at.sequence + 1
        assert follower.version() == at  # not the store's sequence: lexical is behind
    finally:
        follower.close()
        writer.close()


def test_writes_are_refused(tmp_path: Path) -> None:
    writer = open_collection(tmp_path / "c")
    follower = _follower(tmp_path / "c")
    try:
        with pytest.raises(FailedPrecondition, match="only reads"):
            follower.commit([prepared("a")])
        with pytest.raises(FailedPrecondition, match="only reads"):
            follower.delete_documents(["a"])
    finally:
        follower.close()
        writer.close()


def test_backend_sees_drop_and_recreate(tmp_path: Path) -> None:
    directory = tmp_path / "t" / "c"
    writer = open_collection(directory)
    writer.commit([prepared("a")])
    backend = FollowerBackend()
    follower = backend.open("t", "c", directory, None, "cpu")
    try:
        assert backend.is_current(follower)
        writer.close()
        shutil.rmtree(directory)
        assert not backend.is_current(follower)
        writer = open_collection(directory)
        assert not backend.is_current(follower)
        fresh = backend.open("t", "c", directory, None, "cpu")
        assert backend.is_current(fresh) and fresh.store.counts() == (0, 0)
        fresh.close()
    finally:
        follower.close()
        writer.close()


def test_missing_collection_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        _follower(tmp_path / "absent")
    assert not (tmp_path / "absent").exists()


def test_the_writer_names_the_sequence_before_a_write_until_its_indexes_hold_it(
    tmp_path: Path,
) -> None:
    writer = open_collection(tmp_path / "c")
    writer.commit([prepared("a")])
    before = writer.version()
    seen: list[tuple[int, CollectionVersion]] = []
    mirror = writer._mirror

    def mirror_and_look(*args: object) -> None:  # runs after the store commit, before indexes
        seen.append((writer.store.sequence(), writer.version()))
        mirror(*args)  # type: ignore[arg-type]

    writer._mirror = mirror_and_look  # type: ignore[method-assign]
    try:
        writer.commit([prepared("b")])
        assert seen == [(before.sequence + 1, before)]
        assert writer.version().sequence == before.sequence + 1
        writer.delete_documents(["a"])
        assert seen[-1] == (before.sequence + 2, replace(before, sequence=before.sequence + 1))
    finally:
        writer.close()


def _structure(collection: Collection) -> str:
    index = collection._dense
    assert isinstance(index, FaissIndex)
    return index.structure


def test_follower_replays_the_adds_that_turn_an_auto_index_into_a_graph(tmp_path: Path) -> None:
    """An "auto" index crosses its threshold in the reader's replay as in the writer: deletes
    before the crossing (real deletes) and after it (tombstones) are never served. (A replay
    nets out rows added and deleted within one catch-up, so a reader can stay flat, and exact,
    where the writer crossed on the way.)"""
    writer = open_collection(tmp_path / "c", "auto")
    writer.commit([prepared(f"d{i}", count=4) for i in range(8)])  # 32 vectors: flat
    follower = _follower(tmp_path / "c")
    try:
        assert _structure(follower) == _structure(writer) == "flat"
        writer.delete_documents(["d0"])
        writer.commit([prepared(f"e{i}", count=4) for i in range(4)])  # 44 > AUTO_THRESHOLD
        follower.catch_up()
        assert _structure(follower) == _structure(writer) == "hnsw"
        writer.delete_documents(["e0"])
        follower.catch_up()
        assert follower._dense.tombstone_count == writer._dense.tombstone_count == 4
        live = store_row_ids(writer)
        assert len(live) == 40 and AUTO_THRESHOLD < 44
        assert _dense_rows(follower) == dense_row_ids(follower) == live
        assert follower.version() == writer.version()
    finally:
        follower.close()
        writer.close()
