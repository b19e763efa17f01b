"""OpenMP threads of FAISS searches: up to 16 queries search on their calling thread alone, the
thread's own setting is restored afterwards, other threads are unaffected, and the results are
the exact top-k either way."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import faiss
import numpy as np
import pytest

from core.dense.exact import exact_top_k
from core.dense.faiss_index import FaissIndex
from core.dense.faiss_threads import ALONE_MAX_QUERIES, search_threads
from core.dense.spec import DenseIndexSpec


def unit_rows(count: int, dimension: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, dimension)).astype(np.float32)
    unit: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return unit


@pytest.fixture(autouse=True)
def two_threads() -> Iterator[None]:
    """This thread's FAISS setting at 2 for the test, then back to what it was."""
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(2)
    yield
    faiss.omp_set_num_threads(before)


def test_a_combined_search_runs_alone_and_the_threads_setting_comes_back() -> None:
    seen: list[int] = []
    with search_threads(1):
        seen.append(faiss.omp_get_max_threads())
    with search_threads(ALONE_MAX_QUERIES):
        seen.append(faiss.omp_get_max_threads())
    with search_threads(ALONE_MAX_QUERIES + 1):
        seen.append(faiss.omp_get_max_threads())
    assert seen == [1, 1, 2]
    assert faiss.omp_get_max_threads() == 2


def test_the_setting_belongs_to_the_calling_thread() -> None:
    inside = threading.Event()
    release = threading.Event()
    elsewhere: list[int] = []

    def search_alone() -> None:
        with search_threads(1):
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=search_alone)
    worker.start()
    assert inside.wait(10)
    elsewhere.append(faiss.omp_get_max_threads())  # this thread, while the worker is inside
    release.set()
    worker.join(10)
    assert elsewhere == [2]


def test_single_and_batched_searches_return_the_exact_top_k() -> None:
    vectors = unit_rows(3000, 32, seed=1)
    queries = unit_rows(12, 32, seed=2)
    ids = np.arange(10, 3010, dtype=np.int64)
    index = FaissIndex.create(DenseIndexSpec(), 32)
    index.add(ids, vectors)
    _, expected = exact_top_k(queries, vectors, ids, 20)
    singles = np.concatenate([index.search(row[None, :], 20)[1] for row in queries])
    _, batched = index.search(queries, 20)
    assert (singles == expected).all()
    assert (batched == expected).all()
