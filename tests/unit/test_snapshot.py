"""Snapshots of real collections: one consistent sequence under concurrent upserts, restore round
trips (in place and into a new directory), listing, deletion, corruption and id validation."""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.catalog.collection import Collection
from core.catalog.replay import IndexAction
from core.catalog.snapshot import (
    SnapshotInfo,
    delete_snapshot,
    list_snapshots,
    restore_snapshot,
    stage_restore,
    take_snapshot,
)
from core.catalog.snapshot_manifest import MANIFEST_FILE
from core.dense.faiss_index import FaissIndex
from core.errors import DataLoss, InvalidArgument, NotFound
from core.store import SqliteStore
from tests.unit.collection_support import (
    dense_results,
    dense_row_ids,
    exact_results,
    lexical_matches,
    lexical_row_ids,
    open_collection,
    store_row_ids,
    write,
)

FIXED = datetime(2026, 11, 23, 10, 15, 0, tzinfo=UTC)


def _fixed_clock() -> datetime:
    return FIXED


def _fill(collection: Collection, count: int = 8) -> None:
    for i in range(count):
        write(collection, f"d{i}")
    write(collection, "d1", version=1)
    collection.delete_documents(["d2"])


def _view(collection: Collection) -> tuple[object, ...]:
    """What searches see: dense results, lexical matches and the live chunk ids."""
    live = store_row_ids(collection)
    chunk_ids = sorted(c.chunk_id for c in collection.get_chunks(sorted(live)).values())
    return dense_results(collection), lexical_matches(collection), chunk_ids


@pytest.fixture
def collection(tmp_path: Path) -> Collection:
    opened = open_collection(tmp_path / "data" / "c")
    _fill(opened)
    return opened


def test_restore_in_place_round_trip(collection: Collection, tmp_path: Path) -> None:
    root, directory = tmp_path / "snapshots", collection.directory
    expected = _view(collection)
    info = take_snapshot(collection, root)
    assert (info.sequence, info.document_count, info.chunk_count) == (10, 7, 21)
    assert info.collection == "c" and not info.includes_dense_index
    write(collection, "after")
    collection.delete_documents(["d0", "d1"])
    assert _view(collection) != expected
    collection.close()

    restored_info = restore_snapshot(root, info.snapshot_id, directory)
    assert restored_info == info
    restored = open_collection(directory)
    try:
        report = restored.open_report
        assert report is not None
        assert (report.dense.action, report.dense.reason) == (IndexAction.REBUILT, "missing")
        assert (report.lexical.action, report.lexical.reason) == (IndexAction.REBUILT, "missing")
        assert restored.store.sequence() == 10
        assert _view(restored) == expected
        assert dense_row_ids(restored) == lexical_row_ids(restored) == store_row_ids(restored)
    finally:
        restored.close()
    assert sorted(p.name for p in directory.parent.iterdir()) == ["c"]  # no temp dirs left


def test_snapshot_with_dense_index_restores_without_a_dense_rebuild(
    collection: Collection, tmp_path: Path
) -> None:
    root = tmp_path / "snapshots"
    expected = _view(collection)
    info = take_snapshot(collection, root, include_dense_index=True)
    collection.close()
    assert info.includes_dense_index
    target = tmp_path / "data" / "copy"
    restore_snapshot(root, info.snapshot_id, target)
    restored = open_collection(target)
    try:
        report = restored.open_report
        assert report is not None
        assert report.dense.action is IndexAction.UP_TO_DATE
        assert report.lexical.action is IndexAction.REBUILT
        assert _view(restored) == expected
        assert dense_results(restored) == exact_results(restored)
    finally:
        restored.close()


@pytest.mark.parametrize(("documents", "structure"), [(8, "flat"), (16, "hnsw")])
def test_an_auto_collection_snapshots_its_dense_index_once_it_is_a_graph(
    tmp_path: Path, documents: int, structure: str
) -> None:
    """By default the dense file is copied only past the flat stage (a graph is slow to rebuild);
    the restored graph keeps its tombstones and serves no deleted row."""
    collection = open_collection(tmp_path / "data" / "c", "auto")
    _fill(collection, documents)  # 3 chunks each: 8 stay below AUTO_THRESHOLD, 16 cross it
    index = collection._dense
    assert isinstance(index, FaissIndex) and index.structure == structure
    expected = _view(collection)
    info = take_snapshot(collection, tmp_path / "snapshots")
    collection.close()
    assert info.includes_dense_index is (structure == "hnsw")
    restore_snapshot(tmp_path / "snapshots", info.snapshot_id, tmp_path / "data" / "copy")
    restored = open_collection(tmp_path / "data" / "copy", "auto")
    try:
        report = restored.open_report
        assert report is not None
        rebuilt = report.dense.action is IndexAction.REBUILT
        assert rebuilt is (structure == "flat")
        restored_index = restored._dense
        assert isinstance(restored_index, FaissIndex) and restored_index.structure == structure
        assert restored_index.tombstone_count == (6 if structure == "hnsw" else 0)
        assert _view(restored) == expected
        assert dense_row_ids(restored) == store_row_ids(restored)
    finally:
        restored.close()


def test_restore_into_a_new_directory_while_the_original_serves(
    collection: Collection, tmp_path: Path
) -> None:
    root = tmp_path / "snapshots"
    info = take_snapshot(collection, root)
    try:
        target = tmp_path / "data" / "copy"
        staged = stage_restore(root, info.snapshot_id, target)
        assert not target.exists() and staged.directory.parent == target.parent
        restore_snapshot(root, info.snapshot_id, target)
        copy = open_collection(target)
        try:
            assert _view(copy) == _view(collection)
        finally:
            copy.close()
    finally:
        collection.close()


def test_snapshot_is_at_one_sequence_while_upserts_run(tmp_path: Path) -> None:
    collection = open_collection(tmp_path / "data" / "c")
    sequences: dict[str, int] = {}
    enough_before, stop = threading.Event(), threading.Event()
    after_snapshot: list[int] = []

    def upserts() -> None:
        i = 0
        while not stop.is_set() or len(after_snapshot) < 5:
            sequences[f"w{i}"] = write(collection, f"w{i}", count=4)
            if stop.is_set():
                after_snapshot.append(i)
            if i == 5:
                enough_before.set()
            i += 1

    writer = threading.Thread(target=upserts)
    writer.start()
    try:
        enough_before.wait()
        info = take_snapshot(collection, tmp_path / "snapshots")
    finally:
        stop.set()
        writer.join()
    final_sequence = collection.store.sequence()
    collection.close()

    assert info.sequence >= 6 and info.sequence < final_sequence
    with SqliteStore.open(tmp_path / "snapshots" / info.snapshot_id / "store.sqlite3") as copy:
        assert copy.sequence() == info.sequence
        assert copy.counts() == (info.document_count, info.chunk_count)
        expected = {doc for doc, seq in sequences.items() if seq <= info.sequence}
        assert info.document_count == len(expected)
        for document_id in expected:
            stored = copy.get_document(document_id)
            assert stored is not None and len(stored.chunks) == 4
        assert copy.get_document(f"w{info.sequence}") is None  # written at sequence + 1


def test_other_databases_are_copied(collection: Collection, tmp_path: Path) -> None:
    memories = collection.directory / "memories.sqlite3"
    with sqlite3.connect(memories) as db:
        db.execute("CREATE TABLE memories (text TEXT)")
        db.execute("INSERT INTO memories VALUES ('remember the harbor')")
    db.close()
    root = tmp_path / "snapshots"
    info = take_snapshot(collection, root)
    collection.close()
    manifest = json.loads((root / info.snapshot_id / MANIFEST_FILE).read_text())
    assert sorted(manifest["files"]) == ["memories.sqlite3", "store.sqlite3"]
    assert manifest["config"]["embedding_dim"] == 16
    target = tmp_path / "data" / "copy"
    restore_snapshot(root, info.snapshot_id, target)
    with sqlite3.connect(target / "memories.sqlite3") as db:
        assert db.execute("SELECT text FROM memories").fetchall() == [("remember the harbor",)]
    db.close()


def test_ids_are_unique_and_listed_newest_first(collection: Collection, tmp_path: Path) -> None:
    root = tmp_path / "snapshots"
    try:
        first = take_snapshot(collection, root, clock=_fixed_clock)
        second = take_snapshot(collection, root, clock=_fixed_clock)
        write(collection, "later")
        third = take_snapshot(collection, root, clock=lambda: FIXED + timedelta(minutes=1))
    finally:
        collection.close()
    assert first.snapshot_id == "20261123T101500Z-10"
    assert second.snapshot_id == "20261123T101500Z-10-2"
    assert first.created_unix_ms == 1795428900000
    listed = list_snapshots(root)
    assert third.snapshot_id == "20261123T101600Z-11"
    assert [s.snapshot_id for s in listed] == [
        third.snapshot_id,
        "20261123T101500Z-10-2",
        "20261123T101500Z-10",
    ]
    assert listed[-1] == first
    assert all(isinstance(s, SnapshotInfo) and s.size_bytes > 0 for s in listed)
    assert list_snapshots(tmp_path / "none") == []


def test_delete_snapshot_frees_its_bytes(collection: Collection, tmp_path: Path) -> None:
    root = tmp_path / "snapshots"
    info = take_snapshot(collection, root)
    collection.close()
    assert delete_snapshot(root, info.snapshot_id) == info.size_bytes
    assert list_snapshots(root) == []
    assert list(root.iterdir()) == []
    with pytest.raises(NotFound) as caught:
        delete_snapshot(root, info.snapshot_id)
    assert str(caught.value) == (
        f"snapshot '{info.snapshot_id}' does not exist; list the collection's snapshots with "
        "ListSnapshots"
    )


def test_corrupt_snapshot_is_detected_and_the_target_kept(
    collection: Collection, tmp_path: Path
) -> None:
    root, directory = tmp_path / "snapshots", collection.directory
    info = take_snapshot(collection, root)
    expected = _view(collection)
    collection.close()
    damaged = root / info.snapshot_id / "store.sqlite3"
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))

    with pytest.raises(DataLoss) as caught:
        restore_snapshot(root, info.snapshot_id, directory)
    assert str(caught.value) == (
        f"snapshot '{info.snapshot_id}' is corrupt: store.sqlite3 does not match the checksum "
        "in its manifest; restore another snapshot (see ListSnapshots)"
    )
    assert sorted(p.name for p in directory.parent.iterdir()) == ["c"]
    reopened = open_collection(directory)
    try:
        assert _view(reopened) == expected
    finally:
        reopened.close()


def test_missing_file_and_bad_manifest_are_reported(collection: Collection, tmp_path: Path) -> None:
    root = tmp_path / "snapshots"
    info = take_snapshot(collection, root)
    collection.close()
    snapshot = root / info.snapshot_id
    (snapshot / "store.sqlite3").unlink()
    with pytest.raises(DataLoss) as missing:
        restore_snapshot(root, info.snapshot_id, tmp_path / "data" / "copy")
    assert str(missing.value) == (
        f"snapshot '{info.snapshot_id}' is corrupt: store.sqlite3 is missing; restore another "
        "snapshot (see ListSnapshots)"
    )
    manifest = json.loads((snapshot / MANIFEST_FILE).read_text())
    manifest["files"] = {"../escape": {"bytes": 1, "sha256": "00"}}
    (snapshot / MANIFEST_FILE).write_text(json.dumps(manifest))
    with pytest.raises(DataLoss) as traversal:
        restore_snapshot(root, info.snapshot_id, tmp_path / "data" / "copy")
    assert str(traversal.value) == (
        f"snapshot '{info.snapshot_id}' has an unreadable manifest (file name '../escape' is not "
        "a plain relative path); delete it and take a new one"
    )
    assert list_snapshots(root) == []  # unreadable snapshots are skipped (and logged)
    assert not (tmp_path / "data" / "copy").exists()


@pytest.mark.parametrize(
    "snapshot_id",
    [
        pytest.param("../c", id="traversal"),
        pytest.param("20261123T101500Z", id="no-sequence"),
        pytest.param("20261123T101500Z-4/..", id="path-suffix"),
        pytest.param("", id="empty"),
        pytest.param("20261123t101500z-4", id="lower-case"),
    ],
)
def test_malformed_ids_are_rejected(tmp_path: Path, snapshot_id: str) -> None:
    for call in (
        lambda: restore_snapshot(tmp_path, snapshot_id, tmp_path / "target"),
        lambda: delete_snapshot(tmp_path, snapshot_id),
    ):
        with pytest.raises(InvalidArgument) as caught:
            call()
        assert str(caught.value) == (
            f"snapshot_id: {snapshot_id!r} is not a snapshot id; ids look like "
            "'20261123T101500Z-42' (see ListSnapshots)"
        )
        assert caught.value.violations[0].field == "snapshot_id"


def test_unknown_id_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound) as caught:
        restore_snapshot(tmp_path, "20261123T101500Z-42", tmp_path / "target")
    assert str(caught.value) == (
        "snapshot '20261123T101500Z-42' does not exist; list the collection's snapshots with "
        "ListSnapshots"
    )
