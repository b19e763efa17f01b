"""Combined dense searches (core/dense/combined_search.py) over real FAISS indexes: queries that
wait for the index are searched in one call and each gets exactly its result alone, across
different k, with the index swapped or rows deleted meanwhile, and with searches that raise.

Scores: a combined flat call of 4+ queries of 384 goes through FAISS's BLAS path
(core/dense/faiss_shared_scan.py), which may round a score differently in the last place from
the per-query scan a lone query gets; scores are compared to 1e-5, row ids exactly (the random
vectors here have no ties)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from core.dense.combined_search import (
    MAX_COMBINED_QUERIES,
    Results,
    SearchCombiner,
    search_per_k,
    search_with_largest_k,
)
from core.dense.faiss_index import FaissIndex
from core.dense.spec import DenseIndexSpec

DIM = 384
SPECS = {
    "flat": DenseIndexSpec(kind="flat"),
    "hnsw": DenseIndexSpec(kind="hnsw", hnsw_m=8, hnsw_ef_construction=40, hnsw_ef_search=64),
    "ivf_flat": DenseIndexSpec(kind="ivf_flat", ivf_nlist=8, ivf_nprobe=3),
    "auto": DenseIndexSpec(kind="auto", auto_graph_threshold=1000, hnsw_m=8),  # a graph at 2,000
}
KS = (5, 20, 50)


def unit_rows(count: int, seed: int, dimension: int = DIM) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, dimension)).astype(np.float32)
    unit: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return unit


def built(kind: str, seed: int, first_id: int = 0) -> FaissIndex:
    index = FaissIndex.create(SPECS[kind], DIM)
    index.add(np.arange(first_id, first_id + 2000, dtype=np.int64), unit_rows(2000, seed))
    return index


class Searched:
    """A combiner over the index in `current[0]` (swappable under `lock`), as a collection has."""

    def __init__(self, index: FaissIndex, kind: str = "flat") -> None:
        self.lock = threading.RLock()
        self.current = [index]
        self.kind = kind
        self.combiner = SearchCombiner(self.lock, self.search_rows)

    def search_rows(self, queries: np.ndarray, ks: Sequence[int]) -> list[Results]:
        by = search_per_k if self.kind in ("hnsw", "auto") else search_with_largest_k
        return by(self.current[0].search, queries, ks)

    def search(self, query: np.ndarray, k: int) -> Results:
        return self.combiner.search(query[None, :], k)


def assert_same(got: Results, expected: Results) -> None:
    assert got[0].shape == got[1].shape == expected[1].shape
    np.testing.assert_array_equal(got[1], expected[1])
    np.testing.assert_allclose(got[0], expected[0], rtol=0, atol=1e-5)


def in_threads(calls: list[Callable[[], Results]]) -> tuple[list[threading.Thread], list[object]]:
    """Start one thread per call; outcomes[i] is its Results or the exception it raised."""
    outcomes: list[object] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            outcomes[i] = calls[i]()
        except Exception as error:  # noqa: BLE001 - the outcome under test
            outcomes[i] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    return threads, outcomes


def queued_while_held(
    searched: Searched, calls: list[Callable[[], Results]], while_held: Callable[[], None] = list
) -> list[object]:
    """Hold the lock until every call has queued, run `while_held`, release, collect."""
    with searched.lock:
        threads, outcomes = in_threads(calls)
        deadline = time.monotonic() + 60
        while searched.combiner.waiting < len(calls):  # a condition, not a timing threshold
            assert time.monotonic() < deadline, "the searches never queued"
            time.sleep(0.001)
        while_held()
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive(), "a waiter hung"
    return outcomes


@pytest.mark.parametrize("kind", list(SPECS))
def test_queued_queries_share_one_call_and_each_gets_its_own_row(kind: str) -> None:
    index = built(kind, seed=1)
    searched = Searched(index, kind)
    queries = unit_rows(12, seed=2)
    ks = [KS[i % 3] for i in range(12)]
    calls = [lambda q=q, k=k: searched.search(q, k) for q, k in zip(queries, ks, strict=True)]
    outcomes = queued_while_held(searched, calls)
    assert searched.combiner.sizes == Counter({12: 1})
    for query, k, got in zip(queries, ks, outcomes, strict=True):
        assert isinstance(got, tuple)
        assert_same(got, index.search(query[None, :], k))


def test_more_queries_than_the_cap_take_two_calls() -> None:
    index = built("flat", seed=3)
    searched = Searched(index)
    queries = unit_rows(MAX_COMBINED_QUERIES + 4, seed=4)
    outcomes = queued_while_held(searched, [lambda q=q: searched.search(q, 10) for q in queries])
    assert searched.combiner.sizes == Counter({MAX_COMBINED_QUERIES: 1, 4: 1})
    for query, got in zip(queries, outcomes, strict=True):
        assert isinstance(got, tuple)
        assert_same(got, index.search(query[None, :], 10))


def test_a_query_with_no_company_is_searched_alone_at_once() -> None:
    index = built("flat", seed=5)
    searched = Searched(index)
    query = unit_rows(1, seed=6)[0]
    assert_same(searched.search(query, 7), index.search(query[None, :], 7))
    assert searched.combiner.sizes == Counter({1: 1})
    assert searched.combiner.waiting == 0


@pytest.mark.parametrize("kind", list(SPECS))
def test_free_running_threads_get_what_they_would_get_alone(kind: str) -> None:
    index = built(kind, seed=7)
    searched = Searched(index, kind)
    queries = unit_rows(64, seed=8)
    expected = {(i, k): index.search(queries[i : i + 1], k) for i in range(64) for k in KS}

    def worker(offset: int) -> Results:
        for step in range(40):
            i, k = (offset * 7 + step) % 64, KS[(offset + step) % 3]
            assert_same(searched.search(queries[i], k), expected[(i, k)])
        return expected[(0, KS[0])]

    threads, outcomes = in_threads([lambda o=o: worker(o) for o in range(8)])
    for thread in threads:
        thread.join(120)
    assert all(isinstance(outcome, tuple) for outcome in outcomes), outcomes
    assert sum(size * calls for size, calls in searched.combiner.sizes.items()) == 8 * 40


def test_queries_queued_before_a_swap_are_answered_from_the_new_index() -> None:
    old, new = built("flat", seed=9), built("flat", seed=10, first_id=5000)
    searched = Searched(old)
    queries = unit_rows(8, seed=11)
    calls = [lambda q=q: searched.search(q, 20) for q in queries]
    outcomes = queued_while_held(searched, calls, lambda: searched.current.__setitem__(0, new))
    for query, got in zip(queries, outcomes, strict=True):
        assert isinstance(got, tuple)
        assert_same(got, new.search(query[None, :], 20))
        assert got[1].min() >= 5000


def test_every_result_comes_from_one_index_while_indexes_swap() -> None:
    first, second = built("flat", seed=12), built("flat", seed=13, first_id=5000)
    searched = Searched(first)
    queries = unit_rows(32, seed=14)
    alone = {
        id(index): [index.search(queries[i : i + 1], 20) for i in range(32)]
        for index in (first, second)
    }
    stop = threading.Event()

    def swapper() -> Results:
        while not stop.is_set():
            with searched.lock:
                current = searched.current[0]
                searched.current[0] = second if current is first else first
            time.sleep(0)
        return alone[id(first)][0]

    def worker(offset: int) -> Results:
        for step in range(30):
            i = (offset * 5 + step) % 32
            got = searched.search(queries[i], 20)
            source = first if got[1].max() < 5000 else second
            assert_same(got, alone[id(source)][i])
        return got

    swapping, _ = in_threads([swapper])
    threads, outcomes = in_threads([lambda o=o: worker(o) for o in range(8)])
    for thread in threads:
        thread.join(120)
    stop.set()
    swapping[0].join(60)
    assert all(isinstance(outcome, tuple) for outcome in outcomes), outcomes


def test_rows_deleted_before_a_search_starts_never_come_back() -> None:
    index = built("flat", seed=15)
    searched = Searched(index)
    queries = unit_rows(16, seed=16)
    removed: set[int] = set()  # published after the removal returns, as an acknowledged delete
    stop = threading.Event()

    def remover() -> Results:
        # each round removes the current top hits of a query, so deletes hit what searches find
        for round_ in range(60):
            if stop.is_set():
                break
            _, ids = searched.search(queries[round_ % 16], 3)
            doomed = [int(i) for i in ids[0] if i >= 0]
            with searched.lock:
                index.remove(np.asarray(doomed, dtype=np.int64))
            removed.update(doomed)
        return index.search(queries[:1], 1)

    def worker(offset: int) -> Results:
        for step in range(40):
            gone = set(removed)
            got = searched.search(queries[(offset + step) % 16], 10)
            assert not gone.intersection(got[1][0].tolist())
        return got

    removing, _ = in_threads([remover])
    threads, outcomes = in_threads([lambda o=o: worker(o) for o in range(6)])
    for thread in threads:
        thread.join(120)
    stop.set()
    removing[0].join(60)
    assert all(isinstance(outcome, tuple) for outcome in outcomes), outcomes
    assert removed


def test_a_failing_search_raises_in_every_waiter() -> None:
    lock = threading.RLock()

    def broken(queries: np.ndarray, ks: Sequence[int]) -> list[Results]:
        raise RuntimeError(f"index unreadable ({queries.shape[0]} queries)")

    combiner = SearchCombiner(lock, broken)
    searched = Searched(built("flat", seed=17))
    searched.lock, searched.combiner = lock, combiner
    queries = unit_rows(6, seed=18)
    outcomes = queued_while_held(searched, [lambda q=q: searched.search(q, 5) for q in queries])
    assert [type(outcome) for outcome in outcomes] == [RuntimeError] * 6
    # the combined call failed, then each query alone, each with its own error
    assert {str(outcome) for outcome in outcomes} == {"index unreadable (1 queries)"}
    assert combiner.sizes == Counter({6: 1}) and combiner.waiting == 0


def test_a_bad_query_fails_alone_and_the_others_get_their_results() -> None:
    index = built("flat", seed=19)
    searched = Searched(index)
    queries = unit_rows(5, seed=20)
    calls: list[Callable[[], Results]] = [lambda q=q: searched.search(q, 5) for q in queries]
    calls.insert(2, lambda: searched.combiner.search(unit_rows(1, seed=21, dimension=3), 5))
    outcomes = queued_while_held(searched, calls)
    error = outcomes.pop(2)
    assert isinstance(error, ValueError)
    assert str(error) == "queries must have shape (q, 384), got (1, 3)"
    for query, got in zip(queries, outcomes, strict=True):
        assert isinstance(got, tuple)
        assert_same(got, index.search(query[None, :], 5))
