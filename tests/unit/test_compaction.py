"""Compaction on real collections: tombstones gone, results unchanged, deleted content never
returns, the change log pruned with a monotonic sequence, idempotent, searches served meanwhile."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from core.catalog.collection import LEXICAL_DIR, Collection
from core.catalog.compaction import compact
from core.catalog.directory_swap import sibling_temp
from core.catalog.replay import IndexAction
from tests.unit.collection_support import (
    WORDS,
    dense_results,
    dense_row_ids,
    exact_results,
    lexical_matches,
    lexical_row_ids,
    open_collection,
    store_row_ids,
    vectors_for,
    write,
)


def _churn(collection: Collection) -> None:
    """Twenty documents, six replaced and eight deleted."""
    for i in range(20):
        write(collection, f"d{i}", count=4)
    for i in range(6):
        write(collection, f"d{i}", count=3, version=1)
    collection.delete_documents([f"d{i}" for i in range(6, 14)])


@pytest.fixture
def hnsw(tmp_path: Path) -> Collection:
    collection = open_collection(tmp_path / "c", "hnsw")
    _churn(collection)
    return collection


def test_compaction_removes_tombstones_and_keeps_results(hnsw: Collection) -> None:
    live = store_row_ids(hnsw)
    before = (dense_results(hnsw), lexical_matches(hnsw))
    assert hnsw.dense_tombstones == 6 * 4 + 8 * 4
    assert dense_results(hnsw) == exact_results(hnsw)  # small graph: HNSW finds the exact top-5

    report = compact(hnsw)
    try:
        assert report.removed_tombstones == 56
        assert report.sequence == hnsw.store.sequence() == 34
        assert report.pruned_changes == 34
        assert report.disk_bytes_after < report.disk_bytes_before
        assert hnsw.dense_tombstones == 0
        figures = hnsw.figures()
        assert (figures.dense_sequence, figures.lexical_sequence) == (34, 34)
        assert figures.dense_saved_sequence == 34
        assert dense_row_ids(hnsw) == lexical_row_ids(hnsw) == live
        assert (dense_results(hnsw), lexical_matches(hnsw)) == before
    finally:
        hnsw.close()


def test_compacted_lexical_scores_equal_a_fresh_build(tmp_path: Path) -> None:
    compacted = open_collection(tmp_path / "a")
    fresh = open_collection(tmp_path / "b")
    try:
        _churn(compacted)
        for i in range(20):  # the same live chunks, each written once
            if not 6 <= i < 14:
                write(fresh, f"d{i}", count=3 if i < 6 else 4, version=1 if i < 6 else 0)
        assert _scores(compacted) != _scores(fresh)  # deleted rows still count in BM25 stats
        compact(compacted)
        assert _scores(compacted) == _scores(fresh)
    finally:
        compacted.close()
        fresh.close()


def _scores(collection: Collection) -> list[dict[str, float]]:
    """BM25 score per chunk id for one query per vocabulary word."""
    results = []
    for word in WORDS:
        hits = collection.lexical_search(word, 1000)
        chunks = collection.get_chunks([row for row, _ in hits])
        results.append({chunks[row].chunk_id: round(score, 4) for row, score in hits})
    return results


def test_deleted_documents_never_return(hnsw: Collection) -> None:
    directory = hnsw.directory
    compact(hnsw)
    hnsw.close()
    reopened = open_collection(directory, "hnsw")
    try:
        report = reopened.open_report
        assert report is not None
        assert (report.dense.action, report.lexical.action) == (
            IndexAction.UP_TO_DATE,
            IndexAction.UP_TO_DATE,
        )
        for i in range(6, 14):
            assert reopened.lexical_search(f"zqd{i}v0", 10) == []
            query = vectors_for(f"d{i}", 4, 0)
            _, ids = reopened.dense_search(query, 5)
            assert set(ids.ravel().tolist()) <= store_row_ids(reopened) | {-1}
        for i in range(6):  # replaced: the old version is gone, the new one is found
            assert reopened.lexical_search(f"zqd{i}v0", 10) == []
            assert len(reopened.lexical_search(f"zqd{i}v1", 10)) == 3
    finally:
        reopened.close()


def test_change_log_is_pruned_and_the_sequence_stays_monotonic(hnsw: Collection) -> None:
    try:
        compact(hnsw)
        assert hnsw.store.changes_since(0) == []
        assert hnsw.store.sequence() == 34
        assert write(hnsw, "late") == 35
        assert [change.seq for change in hnsw.store.changes_since(0)] == [35]
    finally:
        hnsw.close()


def test_compaction_is_idempotent(hnsw: Collection) -> None:
    try:
        first = compact(hnsw)
        live, results = store_row_ids(hnsw), dense_results(hnsw)
        second = compact(hnsw)
        assert (second.removed_tombstones, second.pruned_changes) == (0, 0)
        assert second.sequence == first.sequence
        assert dense_row_ids(hnsw) == lexical_row_ids(hnsw) == store_row_ids(hnsw) == live
        assert dense_results(hnsw) == results
    finally:
        hnsw.close()


def test_searches_are_served_while_compacting(hnsw: Collection) -> None:
    live = store_row_ids(hnsw)
    query = vectors_for("d15", 4, 0)[:1]
    first_done, stop = threading.Event(), threading.Event()
    failures: list[str] = []
    searches = [0]

    def search_loop() -> None:
        while not stop.is_set():
            _, ids = hnsw.dense_search(query, 5)
            lexical = {row for row, _ in hnsw.lexical_search("zqd15v0", 10)}
            found = {int(i) for i in ids.ravel() if i >= 0} | lexical
            if not found or not found <= live:
                failures.append(f"search {searches[0]} returned {sorted(found)}")
            searches[0] += 1
            first_done.set()

    thread = threading.Thread(target=search_loop)
    thread.start()
    try:
        first_done.wait()
        compact(hnsw)
    finally:
        stop.set()
        thread.join()
        hnsw.close()
    assert failures == []
    assert searches[0] >= 1


def test_open_removes_an_interrupted_compaction(tmp_path: Path) -> None:
    collection = open_collection(tmp_path / "c")
    write(collection, "a")
    collection.close()
    leftover = sibling_temp(tmp_path / "c" / LEXICAL_DIR, "compact")
    (leftover / "index").mkdir(parents=True)
    reopened = open_collection(tmp_path / "c")
    try:
        assert not leftover.exists()
        assert lexical_row_ids(reopened) == store_row_ids(reopened)
    finally:
        reopened.close()


def test_compacting_an_empty_collection(tmp_path: Path) -> None:
    collection = open_collection(tmp_path / "c", "ivf_flat")
    try:
        report = compact(collection)
        assert (report.removed_tombstones, report.sequence, report.pruned_changes) == (0, 0, 0)
        write(collection, "a")
        assert dense_row_ids(collection) == store_row_ids(collection)
        assert np.array_equal(
            np.array(dense_results(collection)), np.array(exact_results(collection))
        )
    finally:
        collection.close()
