"""Opening a collection: incremental replay of the change log versus a full rebuild, the paths
that force a rebuild, and periodic persistence of the dense index (real SQLite, FAISS, Tantivy)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.catalog import replay
from core.catalog.collection import DENSE_DIR, LEXICAL_DIR, Collection, DensePersistPolicy
from core.catalog.replay import IndexAction
from core.dense.faiss_file import INDEX_FILE
from core.dense.faiss_index import FaissIndex
from core.lexical.tantivy_index import SEQUENCE_FILE
from core.store import SqliteStore
from core.store.protocol import LocalStore, Store
from core.store.sqlite_maintenance import prune_changes
from tests.unit.collection_support import (
    DIM,
    MARKER,
    SPECS,
    dense_results,
    dense_row_ids,
    exact_results,
    lexical_matches,
    lexical_row_ids,
    open_collection,
    run_then_crash,
    store_only,
    store_row_ids,
    write,
)


def _history(collection: Collection) -> None:
    """Ten documents saved at sequence 10; then updates, deletes and new documents that reach
    the indexes but not the dense file; then two commits that reach only the store."""
    for i in range(10):
        write(collection, f"d{i}")
    collection.checkpoint()  # dense file at sequence 10
    for i in range(10, 16):
        write(collection, f"d{i}")
    write(collection, "d1", version=1)
    write(collection, "d12", version=1, count=5)
    collection.delete_documents(["d2", "d3", "d11"])
    store_only(collection, "d20")
    store_only(collection, "d4", version=1, count=2)


def _structure(collection: Collection) -> str:
    index = collection._dense
    assert isinstance(index, FaissIndex)
    return index.structure


def _saved_dense_sequence(directory: Path) -> int:
    loaded = FaissIndex.load(directory / DENSE_DIR)
    assert loaded is not None
    return loaded[1]


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf_flat", "auto"])
def test_reopen_after_crash_replays_and_matches_a_full_rebuild(tmp_path: Path, kind: str) -> None:
    replayed_dir, rebuilt_dir = tmp_path / "replayed", tmp_path / "rebuilt"
    run_then_crash(replayed_dir, _history, kind)
    shutil.copytree(
        replayed_dir, rebuilt_dir, ignore=shutil.ignore_patterns(DENSE_DIR, LEXICAL_DIR)
    )

    replayed = open_collection(replayed_dir, kind)
    rebuilt = open_collection(rebuilt_dir, kind)
    try:
        opened = replayed.open_report
        assert opened is not None
        dense, lexical = opened.dense, opened.lexical
        assert (dense.action, dense.index_sequence, dense.store_sequence) == (
            IndexAction.REPLAYED,
            10,
            23,
        )
        assert (dense.replayed_changes, dense.added, dense.removed) == (13, 25, 18)
        assert (lexical.action, lexical.index_sequence, lexical.replayed_changes) == (
            IndexAction.REPLAYED,
            21,
            2,
        )
        assert (lexical.added, lexical.removed) == (5, 3)
        assert opened.replayed_changes == 15
        assert not opened.rebuilt
        report = rebuilt.open_report
        assert report is not None and report.rebuilt
        assert (report.dense.action, report.dense.reason) == (IndexAction.REBUILT, "missing")
        assert (report.lexical.action, report.lexical.reason) == (IndexAction.REBUILT, "missing")

        live = store_row_ids(replayed)
        assert len(live) == 43
        assert dense_row_ids(replayed) == dense_row_ids(rebuilt) == live
        assert lexical_row_ids(replayed) == lexical_row_ids(rebuilt) == live
        assert replayed.figures().dense_vectors == rebuilt.figures().dense_vectors == 43
        assert lexical_matches(replayed) == lexical_matches(rebuilt)
        if kind == "flat":
            assert dense_results(replayed) == dense_results(rebuilt) == exact_results(replayed)
        if kind == "auto":  # saved flat at 30 vectors; the replay's adds cross the threshold
            assert _structure(replayed) == _structure(rebuilt) == "hnsw"
    finally:
        replayed.close()
        rebuilt.close()


def test_clean_close_reopens_up_to_date(tmp_path: Path) -> None:
    collection = open_collection(tmp_path / "c")
    for i in range(4):
        write(collection, f"d{i}")
    collection.close()
    assert _saved_dense_sequence(tmp_path / "c") == 4

    reopened = open_collection(tmp_path / "c")
    try:
        report = reopened.open_report
        assert report is not None
        assert (report.dense.action, report.lexical.action) == (
            IndexAction.UP_TO_DATE,
            IndexAction.UP_TO_DATE,
        )
        assert report.replayed_changes == 0
        assert dense_row_ids(reopened) == lexical_row_ids(reopened) == store_row_ids(reopened)
    finally:
        reopened.close()


def test_new_collection_creates_empty_indexes(tmp_path: Path) -> None:
    collection = open_collection(tmp_path / "c")
    try:
        report = collection.open_report
        assert report is not None
        assert (report.dense.action, report.lexical.action) == (
            IndexAction.CREATED,
            IndexAction.CREATED,
        )
        assert not report.rebuilt
    finally:
        collection.close()


def test_corrupt_dense_file_is_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    run_then_crash(directory, _history)
    (directory / DENSE_DIR / INDEX_FILE).write_bytes(b"GWDENSE\x01 not an index")

    collection = open_collection(directory)
    try:
        report = collection.open_report
        assert report is not None
        assert (report.dense.action, report.dense.reason) == (IndexAction.REBUILT, "unreadable")
        assert report.dense.index_sequence is None
        assert report.lexical.action is IndexAction.REPLAYED
        assert dense_row_ids(collection) == store_row_ids(collection)
        assert dense_results(collection) == exact_results(collection)
    finally:
        collection.close()
    assert _saved_dense_sequence(directory) == 23


def test_corrupt_lexical_index_is_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    run_then_crash(directory, _history)
    (directory / LEXICAL_DIR / "index" / "meta.json").write_text("{ not json")

    collection = open_collection(directory)
    try:
        report = collection.open_report
        assert report is not None
        assert (report.lexical.action, report.lexical.reason) == (IndexAction.REBUILT, "unreadable")
        assert lexical_row_ids(collection) == store_row_ids(collection)
    finally:
        collection.close()


def test_pruned_change_log_forces_a_rebuild(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    run_then_crash(directory, _history)
    assert prune_changes(directory / "store.sqlite3", 12) == 12

    collection = open_collection(directory)
    try:
        report = collection.open_report
        assert report is not None
        assert (report.dense.action, report.dense.reason) == (
            IndexAction.REBUILT,
            "changes pruned from the log",
        )
        assert report.dense.index_sequence == 10
        assert report.lexical.action is IndexAction.REPLAYED  # at 21: its changes are all there
        assert dense_row_ids(collection) == lexical_row_ids(collection) == store_row_ids(collection)
    finally:
        collection.close()


def test_index_ahead_of_the_store_is_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    run_then_crash(directory, _history)
    stray = FaissIndex.create(SPECS["flat"], DIM)
    stray.add(np.array([9999], dtype=np.int64), np.ones((1, DIM), dtype=np.float32))
    stray.save(directory / DENSE_DIR, 500)

    collection = open_collection(directory)
    try:
        report = collection.open_report
        assert report is not None
        assert (report.dense.action, report.dense.reason) == (
            IndexAction.REBUILT,
            "ahead of the store",
        )
        assert dense_row_ids(collection, 10_000) == store_row_ids(collection)
    finally:
        collection.close()


def test_index_built_with_other_settings_is_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    run_then_crash(directory, _history, kind="flat")
    FaissIndex.create(SPECS["hnsw"], DIM).save(directory / DENSE_DIR, 23)

    collection = open_collection(directory)
    try:
        report = collection.open_report
        assert report is not None
        assert (report.dense.action, report.dense.reason) == (
            IndexAction.REBUILT,
            "built with other settings",
        )
        assert dense_results(collection) == exact_results(collection)
    finally:
        collection.close()


def test_dense_index_is_saved_after_max_changes(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    policy = DensePersistPolicy(max_changes=3, max_interval_s=1e9)
    collection = open_collection(directory, policy=policy)
    try:
        assert _saved_dense_sequence(directory) == 0
        write(collection, "a")
        write(collection, "b")
        assert _saved_dense_sequence(directory) == 0
        assert collection.figures().dense_saved_sequence == 0
        write(collection, "c")
        assert _saved_dense_sequence(directory) == 3
        assert collection.figures().dense_saved_sequence == 3
        collection.delete_documents(["a"])
        assert _saved_dense_sequence(directory) == 3
    finally:
        collection.close()
    assert _saved_dense_sequence(directory) == 4


def test_dense_index_is_saved_once_the_interval_passed(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    collection = open_collection(directory, policy=DensePersistPolicy(max_interval_s=0.0))
    try:
        write(collection, "a")
        assert _saved_dense_sequence(directory) == 1
        write(collection, "b")
        assert _saved_dense_sequence(directory) == 2
    finally:
        collection.close()


@pytest.mark.parametrize(
    ("changes", "interval", "message"),
    [
        pytest.param(0, 1.0, "max_changes must be >= 1, got 0", id="changes"),
        pytest.param(1, -1.0, "max_interval_s must be >= 0, got -1.0", id="interval"),
    ],
)
def test_persist_policy_validation(changes: int, interval: float, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        DensePersistPolicy(max_changes=changes, max_interval_s=interval)
    assert str(caught.value) == message


def test_sqlite_store_satisfies_the_store_protocols(tmp_path: Path) -> None:
    opened = SqliteStore.open(tmp_path / "store.sqlite3")
    try:
        store: Store = opened
        local: LocalStore = opened
        assert isinstance(store, Store) and isinstance(local, LocalStore)
        assert local.path == tmp_path / "store.sqlite3"
    finally:
        opened.close()


def test_replay_longer_than_a_rebuild_rebuilds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "c"
    run_then_crash(directory, _history)
    monkeypatch.setattr(replay, "REPLAY_ALWAYS_ROWS", 0)  # 25 adds > half of 43 live chunks

    collection = open_collection(directory)
    try:
        report = collection.open_report
        assert report is not None
        assert (report.dense.action, report.dense.reason) == (
            IndexAction.REBUILT,
            "replay longer than a rebuild",
        )
        assert report.lexical.action is IndexAction.REPLAYED
        assert dense_results(collection) == exact_results(collection)
    finally:
        collection.close()


def test_lexical_index_ahead_of_its_recorded_sequence_replays_without_duplicates(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "c"
    run_then_crash(directory, _history)  # lexical committed through 21
    # a crash between Tantivy's commit and the sequence file: the file still says 15
    (directory / LEXICAL_DIR / SEQUENCE_FILE).write_text(json.dumps({"sequence": 15}))

    collection = open_collection(directory)
    try:
        report = collection.open_report
        assert report is not None
        assert (report.lexical.action, report.lexical.replayed_changes) == (
            IndexAction.REPLAYED,
            8,
        )
        live = store_row_ids(collection)
        hits = collection.lexical_search(MARKER, 100_000)
        assert len(hits) == len(live) and {row for row, _ in hits} == live
    finally:
        collection.close()
