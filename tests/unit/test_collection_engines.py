"""Collections through the dense engine factory: the torch engine serving a real collection on
CPU (as it does on a CUDA machine without GPU FAISS), moving a collection between engines, and
query tensors searched without a host copy (real SQLite, FAISS, Tantivy and torch)."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest
import torch

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.compaction import compact
from core.catalog.replay import IndexAction
from core.dense import engine_factory
from core.dense.engine_factory import FaissSupport
from tests.unit.collection_support import (
    DIM,
    NEVER_SAVE,
    SPECS,
    dense_results,
    dense_row_ids,
    exact_results,
    query_vectors,
    store_row_ids,
    write,
)

NO_FAISS = FaissSupport(installed=False, gpus=0)


def _open(directory: Path, kind: str = "flat") -> Collection:
    config = CollectionConfig(dense=SPECS[kind], embedding_dim=DIM, embedding_model="test")
    return Collection.open(directory.name, directory, config, NEVER_SAVE, device="cpu")


@pytest.fixture
def without_faiss(monkeypatch: pytest.MonkeyPatch) -> None:
    """The factory sees no faiss, so every kind is served by the torch engine."""
    monkeypatch.setattr(engine_factory, "probe_faiss", lambda: NO_FAISS)


def _fill(collection: Collection, first: int, last: int) -> None:
    for i in range(first, last):
        write(collection, f"d{i}", count=4)


def _assert_exact(collection: Collection) -> None:
    assert dense_row_ids(collection) == store_row_ids(collection)
    assert dense_results(collection) == exact_results(collection)


@pytest.mark.usefixtures("without_faiss")
@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf_flat"])
def test_torch_engine_serves_a_collection_and_replays_after_a_crash(
    tmp_path: Path, kind: str
) -> None:
    collection = _open(tmp_path / "c", kind)
    assert (collection.dense_engine, collection.dense_device) == ("torch-exact", "cpu")
    _fill(collection, 0, 12)
    collection.checkpoint()  # dense.gwtorch at sequence 12
    _fill(collection, 12, 20)
    collection.delete_documents(["d3", "d14"])
    _assert_exact(collection)
    del collection  # crash: the file still holds sequence 12
    gc.collect()

    reopened = _open(tmp_path / "c", kind)
    assert reopened.open_report is not None
    assert reopened.open_report.dense.action is IndexAction.REPLAYED
    assert reopened.open_report.dense.index_sequence == 12
    _assert_exact(reopened)
    reopened.close()


def test_a_collection_moves_between_engines_and_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "c"
    monkeypatch.setattr(engine_factory, "probe_faiss", lambda: NO_FAISS)
    on_gpu_machine = _open(directory)
    _fill(on_gpu_machine, 0, 10)
    on_gpu_machine.close()  # dense.gwtorch at sequence 10

    monkeypatch.undo()  # the real faiss again: a CPU machine
    on_cpu_machine = _open(directory)
    assert on_cpu_machine.dense_engine == "faiss-flat"
    assert on_cpu_machine.open_report is not None
    assert on_cpu_machine.open_report.dense.action is IndexAction.REBUILT  # no dense.gwfaiss yet
    _fill(on_cpu_machine, 10, 15)
    on_cpu_machine.delete_documents(["d2"])
    _assert_exact(on_cpu_machine)
    on_cpu_machine.close()

    monkeypatch.setattr(engine_factory, "probe_faiss", lambda: NO_FAISS)
    back = _open(directory)
    assert back.dense_engine == "torch-exact"
    assert back.open_report is not None
    assert back.open_report.dense.action is IndexAction.REPLAYED  # from its own file's sequence
    assert back.open_report.dense.index_sequence == 10
    _assert_exact(back)
    back.close()


@pytest.mark.parametrize("faiss_present", [True, False])
def test_query_tensors_give_the_same_results_as_arrays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faiss_present: bool
) -> None:
    if not faiss_present:
        monkeypatch.setattr(engine_factory, "probe_faiss", lambda: NO_FAISS)
    collection = _open(tmp_path / "c")
    _fill(collection, 0, 15)
    queries = query_vectors()
    allowed = np.arange(1, 30, 2, dtype=np.int64)
    for subset in (None, allowed):
        array_scores, array_ids = collection.dense_search(queries, 5, subset)
        tensor_scores, tensor_ids = collection.dense_search(torch.from_numpy(queries), 5, subset)
        np.testing.assert_array_equal(tensor_ids, array_ids)
        np.testing.assert_allclose(tensor_scores, array_scores, atol=1e-5)
    collection.close()


@pytest.mark.usefixtures("without_faiss")
def test_compaction_rebuilds_on_the_same_engine(tmp_path: Path) -> None:
    collection = _open(tmp_path / "c")
    _fill(collection, 0, 10)
    collection.delete_documents(["d1", "d5"])
    report = compact(collection)
    assert report.sequence == collection.store.sequence()
    assert (collection.dense_engine, collection.dense_device) == ("torch-exact", "cpu")
    _assert_exact(collection)
    collection.close()
