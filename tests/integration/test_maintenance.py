"""Snapshots, restore, compaction, memories, caches, expansion and rerank through a real server."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.conftest import make_settings
from tests.server_harness import ServerThread

PAGES = {
    "install": "# Installing\n\nRun the installer, then read [configuration](configure.md#ports).\n\n"
    "## Upgrading\n\nUpgrades keep the data directory in place.",
    "configure": "# Configuring\n\nSettings live in one file.\n\n## Ports\n\nThe gRPC port is 50051 "
    "by default; change server.port to move it.",
    "tuning": "# Tuning\n\nThe HNSW efSearch parameter trades recall for latency.",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    running = ServerThread(make_settings(tmp_path_factory.mktemp("maint"), seed_demo=False)).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def stubs(
    server: ServerThread,
) -> Iterator[tuple[ix_grpc.IndexServiceStub, rs_grpc.RetrievalServiceStub]]:
    with grpc.insecure_channel(server.target) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        yield ix_grpc.IndexServiceStub(channel), rs_grpc.RetrievalServiceStub(channel)


def _upsert(index: ix_grpc.IndexServiceStub, collection: str, pages: dict[str, str]) -> None:
    documents = [
        common.Document(document_id=k, text=v, source_path=f"{k}.md") for k, v in pages.items()
    ]
    index.UpsertDocuments(
        iter([ix.UpsertDocumentsRequest(collection=collection, documents=documents)])
    )


def _retrieve(
    retrieval: rs_grpc.RetrievalServiceStub, collection: str, query: str, **kw: object
) -> rs.RetrieveResponse:
    return retrieval.Retrieve(rs.RetrieveRequest(query=query, collection=collection, **kw))  # type: ignore[arg-type]


def _documents(response: rs.RetrieveResponse) -> set[str]:
    return {h.chunk.document_id for h in response.hits}


def test_snapshot_restore_round_trip(stubs) -> None:  # type: ignore[no-untyped-def]
    index, retrieval = stubs
    index.CreateCollection(ix.CreateCollectionRequest(name="snap"))
    _upsert(index, "snap", PAGES)
    snapshot = index.SnapshotCollection(ix.SnapshotCollectionRequest(collection="snap")).snapshot
    assert snapshot.document_count == 3 and snapshot.sequence >= 1
    index.DeleteDocuments(ix.DeleteDocumentsRequest(collection="snap", document_ids=["tuning"]))
    assert "tuning" not in _documents(_retrieve(retrieval, "snap", "HNSW efSearch recall"))
    listed = index.ListSnapshots(ix.ListSnapshotsRequest(collection="snap")).snapshots
    assert [s.snapshot_id for s in listed] == [snapshot.snapshot_id]
    copy = index.RestoreCollection(
        ix.RestoreCollectionRequest(
            collection="snap", snapshot_id=snapshot.snapshot_id, target_collection="snap-copy"
        )
    )
    assert copy.collection.document_count == 3
    restored = index.RestoreCollection(
        ix.RestoreCollectionRequest(collection="snap", snapshot_id=snapshot.snapshot_id)
    )
    assert restored.collection.document_count == 3
    assert "tuning" in _documents(_retrieve(retrieval, "snap", "HNSW efSearch recall"))
    with pytest.raises(grpc.RpcError) as caught:
        index.RestoreCollection(
            ix.RestoreCollectionRequest(collection="snap", snapshot_id="20260101T000000Z-9")
        )
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as caught:
        index.DeleteSnapshot(ix.DeleteSnapshotRequest(collection="snap", snapshot_id="../../etc"))
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    freed = index.DeleteSnapshot(
        ix.DeleteSnapshotRequest(collection="snap", snapshot_id=snapshot.snapshot_id)
    )
    assert freed.freed_bytes > 0
    assert not index.ListSnapshots(ix.ListSnapshotsRequest(collection="snap")).snapshots


def test_compaction_drops_tombstones_and_deleted_content_never_returns(stubs) -> None:  # type: ignore[no-untyped-def]
    index, retrieval = stubs
    index.CreateCollection(
        ix.CreateCollectionRequest(
            name="graph", dense_index=ix.DenseIndexConfig(kind=ix.DENSE_INDEX_KIND_HNSW)
        )
    )
    _upsert(index, "graph", PAGES)
    first = _retrieve(retrieval, "graph", "HNSW efSearch recall")
    assert "tuning" in _documents(first)
    assert _retrieve(retrieval, "graph", "HNSW efSearch recall").cache_hit
    index.DeleteDocuments(ix.DeleteDocumentsRequest(collection="graph", document_ids=["tuning"]))
    after = _retrieve(retrieval, "graph", "HNSW efSearch recall")
    assert not after.cache_hit and "tuning" not in _documents(after)
    assert index.Stats(ix.StatsRequest(collection="graph")).tombstones >= 1
    report = index.CompactCollection(ix.CompactCollectionRequest(collection="graph"))
    assert report.removed_tombstones >= 1
    stats = index.Stats(ix.StatsRequest(collection="graph"))
    assert stats.tombstones == 0 and stats.dense_engine == "faiss-hnsw"
    assert "tuning" not in _documents(_retrieve(retrieval, "graph", "HNSW efSearch recall"))


def test_memories_are_fused_when_asked_for(stubs) -> None:  # type: ignore[no-untyped-def]
    index, retrieval = stubs
    index.CreateCollection(ix.CreateCollectionRequest(name="mem"))
    _upsert(index, "mem", PAGES)
    added = index.AddMemories(
        ix.AddMemoriesRequest(
            collection="mem",
            memories=[
                ix.Memory(
                    text="The user runs the server on port 7000 behind a proxy.", importance=0.9
                ),
                ix.Memory(text="The user prefers short answers."),
            ],
        )
    )
    assert added.memory_ids == ["memory-1", "memory-2"]
    plain = _retrieve(retrieval, "mem", "which port does the server use")
    assert all(h.chunk.source_type != common.SOURCE_TYPE_MEMORY for h in plain.hits)
    remembered = _retrieve(retrieval, "mem", "which port does the server use", use_memory=True)
    memory_hits = [h for h in remembered.hits if h.chunk.source_type == common.SOURCE_TYPE_MEMORY]
    assert memory_hits and memory_hits[0].chunk.chunk_id == "memory-1"
    assert memory_hits[0].scores.HasField("memory")
    assert index.Stats(ix.StatsRequest(collection="mem")).memories == 2
    with pytest.raises(grpc.RpcError) as caught:
        index.AddMemories(
            ix.AddMemoriesRequest(collection="mem", memories=[ix.Memory(text="x", importance=2)])
        )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "memories[0].importance" in caught.value.details()


def test_expansion_adds_linked_chunks_and_rerank_without_model_warns(stubs) -> None:  # type: ignore[no-untyped-def]
    index, retrieval = stubs
    index.CreateCollection(ix.CreateCollectionRequest(name="links"))
    _upsert(index, "links", PAGES)
    assert index.Stats(ix.StatsRequest(collection="links")).link_edges >= 1
    expanded = _retrieve(
        retrieval,
        "links",
        "how do I run the installer",
        top_k=1,
        expansion=rs.ExpansionPolicy(enabled=True, max_per_hit=2, max_total=2),
    )
    assert expanded.hits[0].chunk.document_id == "install"
    added = [h for h in expanded.hits if h.expanded_from]
    assert 1 <= len(added) <= 2
    assert all(h.expanded_from == expanded.hits[0].chunk.chunk_id for h in added)
    assert all(0 < h.scores.expansion_discount <= 1 for h in added)
    reranked = _retrieve(retrieval, "links", "installer", rerank=rs.RerankParams(enabled=True))
    assert "rerank was requested but no reranker is configured; hits are in fused order" in (
        reranked.warnings
    )


def test_clear_cache_and_keywords(stubs) -> None:  # type: ignore[no-untyped-def]
    index, retrieval = stubs
    index.CreateCollection(ix.CreateCollectionRequest(name="cache"))
    _upsert(index, "cache", PAGES)
    first = _retrieve(retrieval, "cache", "What is the default gRPC port?")
    assert list(first.keywords) == ["default", "grpc", "port"] and first.query_tokens > 0
    assert _retrieve(retrieval, "cache", "What is the default gRPC port?").cache_hit
    cleared = retrieval.ClearCache(rs.ClearCacheRequest(collection="cache"))
    assert cleared.retrieval_entries >= 1
    assert cleared.complete and [p.process for p in cleared.processes] == [0]  # one process
    assert cleared.processes[0].cleared and cleared.processes[0].pid > 0
    assert cleared.processes[0].retrieval_entries == cleared.retrieval_entries
    again = _retrieve(retrieval, "cache", "What is the default gRPC port?")
    assert not again.cache_hit
    assert _retrieve(retrieval, "cache", "What is the default gRPC port?").cache_hit
    stats = index.Stats(ix.StatsRequest(collection="cache"))
    assert stats.retrieval_cache_hits >= 1 and stats.retrieval_cache_entries >= 1
    assert stats.embedding_cache_hits + stats.embedding_cache_misses >= 1
    assert stats.cache_processes == 1  # one process: its own counters
    with pytest.raises(grpc.RpcError) as caught:
        retrieval.ClearCache(rs.ClearCacheRequest(collection="nope"))
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND
