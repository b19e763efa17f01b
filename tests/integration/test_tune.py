"""TuneCollection through gRPC with the real model: a short real tune switches only that collection
to its own model copy (re-embedded, queries still answered), a restart keeps it, writes are
refused while it runs, a second tune of it is ABORTED, and bad input gets precise statuses."""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import numpy as np
import pytest

from core.catalog.collection import MODELS_DIR
from core.embed.embedding_text import embedding_text
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.store.sqlite_store import SqliteStore
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.conftest import make_settings
from tests.server_harness import ServerThread

pytestmark = pytest.mark.slow
TUNE_TIMEOUT_S = 1800
QUESTION = "How do I get documentation on Python?"


def _collection(data: Path, name: str) -> Path:
    return data / "tenants" / "default" / name


def _scores(channel: grpc.Channel, collection: str) -> list[tuple[str, float]]:
    request = rs.RetrieveRequest(query=QUESTION, collection=collection, top_k=3)
    response = rs_grpc.RetrievalServiceStub(channel).Retrieve(request, timeout=120)
    assert response.hits, f"no hits from {collection}"
    return [(h.chunk.chunk_id, h.score) for h in response.hits]


def _info(channel: grpc.Channel) -> dict[str, ix.CollectionInfo]:
    listed = ix_grpc.IndexServiceStub(channel).ListCollections(
        ix.ListCollectionsRequest(), timeout=30
    )
    return {c.name: c for c in listed.collections}


def _upsert_other(index: ix_grpc.IndexServiceStub) -> None:
    index.CreateCollection(ix.CreateCollectionRequest(name="other"), timeout=30)
    docs = [
        common.Document(document_id="docs.md", text="# Docs\n\nPython documentation is online."),
        common.Document(document_id="tea.md", text="# Tea\n\nGreen tea is steeped at 80 °C."),
    ]
    index.UpsertDocuments(
        iter([ix.UpsertDocumentsRequest(collection="other", documents=docs)]), timeout=120
    )


def _wait_until_refused(
    index: ix_grpc.IndexServiceStub, running: grpc.Future
) -> tuple[grpc.RpcError, grpc.RpcError]:
    """A second tune and an upsert of the collection while the first tune runs."""
    second: grpc.RpcError | None = None
    while second is None and not running.done():
        try:
            index.TuneCollection(ix.TuneCollectionRequest(max_steps=1), timeout=TUNE_TIMEOUT_S)
        except grpc.RpcError as error:
            if error.code() is not grpc.StatusCode.ABORTED:
                raise
            second = error
        time.sleep(0.2)
    if second is None:
        pytest.fail("the first tune finished before a second one could be refused")
    document = common.Document(document_id="late.md", text="# Late\n\nArrived during a tune.")
    with pytest.raises(grpc.RpcError) as upsert:
        index.UpsertDocuments(iter([ix.UpsertDocumentsRequest(documents=[document])]), timeout=60)
    return second, upsert.value


def test_tune_gives_the_collection_its_own_model_and_a_restart_keeps_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = ServerThread(make_settings(data)).start()  # the demo corpus in "default"
    try:
        with grpc.insecure_channel(server.target) as channel:
            index = ix_grpc.IndexServiceStub(channel)
            _upsert_other(index)
            other_before = _scores(channel, "other")
            _scores(channel, "default")
            running = index.TuneCollection.future(
                ix.TuneCollectionRequest(max_steps=2, max_pairs=64), timeout=TUNE_TIMEOUT_S
            )
            second, upsert = _wait_until_refused(index, running)
            report: ix.TuneCollectionResponse = running.result()
            tuned = _scores(channel, "default")
            assert _scores(channel, "other") == other_before
            infos = _info(channel)
    finally:
        server.stop()
    assert second.details() == (
        "collection 'default' is already being tuned; wait for that TuneCollection to finish"
    )
    assert upsert.code() is grpc.StatusCode.ABORTED
    assert upsert.details() == (
        "collection 'default' is being tuned (TuneCollection): writes are refused until its "
        "tuned model is swapped in; retry them then"
    )
    assert report.pairs >= 64 and report.train_pairs + report.held_out_pairs == 64
    assert 1 <= report.steps <= 2 and 1 <= report.epochs <= 2  # 58 train pairs: 1 step per epoch
    assert 0.0 <= report.held_out_accuracy_before <= report.held_out_accuracy_after <= 1.0
    assert report.chunks == infos["default"].chunk_count
    assert report.section_seconds > 0.0
    assert report.section_vectors == _section_rows(_collection(data, "default"))
    assert infos["default"].tuned_model == report.model_id and infos["other"].tuned_model == ""
    model_dir = _collection(data, "default") / MODELS_DIR / report.model_id
    assert (model_dir / "modules.json").is_file()  # a plain sentence-transformers directory
    assert sorted(p.name for p in (_collection(data, "default") / MODELS_DIR).iterdir()) == [
        report.model_id
    ]
    assert not (_collection(data, "default") / "dense").exists()  # the old index is gone
    assert not (_collection(data, "other") / MODELS_DIR).exists()
    _assert_stored_vectors_come_from(model_dir, _collection(data, "default"))

    restarted = ServerThread(make_settings(data)).start()
    try:
        with grpc.insecure_channel(restarted.target) as channel:
            assert _info(channel)["default"].tuned_model == report.model_id
            _assert_same_ranking(_scores(channel, "default"), tuned)
            _assert_same_ranking(_scores(channel, "other"), other_before)
            restored = _snapshot_and_restore(ix_grpc.IndexServiceStub(channel))
            assert restored.tuned_model == report.model_id  # the snapshot carried the model
            _assert_same_ranking(_scores(channel, "restored"), tuned)
    finally:
        restarted.stop()


def _assert_same_ranking(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert [chunk for chunk, _ in got] == [chunk for chunk, _ in want]
    assert [score for _, score in got] == pytest.approx([score for _, score in want], abs=1e-4)


def _snapshot_and_restore(index: ix_grpc.IndexServiceStub) -> ix.CollectionInfo:
    snapshot = index.SnapshotCollection(ix.SnapshotCollectionRequest(), timeout=300).snapshot
    restored = index.RestoreCollection(
        ix.RestoreCollectionRequest(snapshot_id=snapshot.snapshot_id, target_collection="restored"),
        timeout=600,
    )
    info: ix.CollectionInfo = restored.collection
    return info


def _assert_stored_vectors_come_from(model_dir: Path, collection_dir: Path) -> None:
    """The store holds what the tuned model makes of each chunk (the re-embedding happened)."""
    with SqliteStore.open(collection_dir / "store.sqlite3") as store:
        row_ids, stored = next(store.iter_live_vectors(batch_size=4))
        chunks = store.get_chunks([int(i) for i in row_ids])
    model = SentenceTransformerEmbedder(str(model_dir), device="cpu")
    texts = [embedding_text(chunks[int(i)].section_path, chunks[int(i)].text) for i in row_ids]
    fresh = model.embed_documents(texts)
    assert np.min(np.sum(fresh * stored, axis=1)) > 0.999


def _section_rows(collection_dir: Path) -> int:
    """Section vectors stored (the demo corpus keeps them: one per section)."""
    with SqliteStore.open(collection_dir / "store.sqlite3") as store:
        ids = [int(i) for batch, _ in store.iter_live_vectors() for i in batch]
        found, _ = store.get_section_vectors(ids)
        assert found.tolist() == sorted(ids)
        chunks = store.get_chunks(ids)
    return len({(c.document_id, c.section_path) for c in chunks.values()})


def test_bad_tune_requests_get_precise_statuses(tmp_path: Path) -> None:
    server = ServerThread(make_settings(tmp_path / "data", seed_demo=False)).start()
    try:
        with grpc.insecure_channel(server.target) as channel:
            index = ix_grpc.IndexServiceStub(channel)
            with pytest.raises(grpc.RpcError) as missing:
                index.TuneCollection(ix.TuneCollectionRequest(collection="nope"), timeout=60)
            index.CreateCollection(ix.CreateCollectionRequest(name="empty"), timeout=30)
            with pytest.raises(grpc.RpcError) as empty:
                index.TuneCollection(ix.TuneCollectionRequest(collection="empty"), timeout=60)
            with pytest.raises(grpc.RpcError) as bounds:
                index.TuneCollection(
                    ix.TuneCollectionRequest(collection="empty", max_pairs=5), timeout=60
                )
    finally:
        server.stop()
    assert missing.value.code() is grpc.StatusCode.NOT_FOUND
    assert empty.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert empty.value.details() == (
        "collection 'empty' gives 0 training pairs (sections with a heading and text); tuning "
        "needs at least 32: index more documents with headings (Markdown, HTML, reST, or titled "
        "text) first"
    )
    assert bounds.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "max_pairs (5) must be >= min_pairs (32)" in bounds.value.details()
