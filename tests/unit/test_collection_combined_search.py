"""`Collection.dense_search` combines the single-query searches that wait for its dense index
(core/dense/combined_search.py): each gets what it gets alone, on every FAISS kind, and a
deleted document's rows never come back to a search started after the delete returned."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from core.catalog.collection import Collection
from tests.unit.collection_support import SPECS, open_collection, query_vectors, write


def written(tmp_path: Path, kind: str, documents: int = 40) -> Collection:
    collection = open_collection(tmp_path / "combined", kind)
    for number in range(documents):
        write(collection, f"doc{number}", count=4)
    return collection


@pytest.mark.parametrize("kind", list(SPECS))
def test_waiting_queries_are_searched_together_with_their_results_alone(
    tmp_path: Path, kind: str
) -> None:
    collection = written(tmp_path, kind)
    queries = query_vectors(10, seed=3)
    ks = [3 + (i % 4) * 10 for i in range(10)]
    alone = [collection.dense_search(q[None, :], k) for q, k in zip(queries, ks, strict=True)]
    outcomes: list[tuple[np.ndarray, np.ndarray] | None] = [None] * 10

    def search(i: int) -> None:
        outcomes[i] = collection.dense_search(queries[i : i + 1], ks[i])

    threads = [threading.Thread(target=search, args=(i,)) for i in range(10)]
    with collection._dense_lock:  # every search queues behind a search in progress
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 60
        while collection._combined.waiting < 10:  # a condition, not a timing threshold
            assert time.monotonic() < deadline, "the searches never queued"
            time.sleep(0.001)
    for thread in threads:
        thread.join(60)
    assert collection._combined.sizes == Counter({1: 10, 10: 1})  # 10 alone above, then one
    for got, expected in zip(outcomes, alone, strict=True):
        assert got is not None
        np.testing.assert_array_equal(got[1], expected[1])
        np.testing.assert_allclose(got[0], expected[0], rtol=0, atol=1e-5)
    collection.close()


def test_a_deleted_document_never_comes_back_to_a_later_search(tmp_path: Path) -> None:
    collection = written(tmp_path, "flat")
    queries = query_vectors(8, seed=5)
    gone: set[int] = set()  # rows of documents whose delete has returned
    failures: list[str] = []

    def searcher(offset: int) -> None:
        for step in range(60):
            before = set(gone)
            _, ids = collection.dense_search(queries[(offset + step) % 8][None, :], 20)
            back = before.intersection(ids[0].tolist())
            if back:
                failures.append(f"deleted rows {sorted(back)} came back")

    threads = [threading.Thread(target=searcher, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for number in range(0, 40, 2):
        result = collection.delete_documents([f"doc{number}"])
        gone.update(result.removed_row_ids)
    for thread in threads:
        thread.join(120)
    assert failures == []
    assert len(gone) == 20 * 4
    collection.close()
