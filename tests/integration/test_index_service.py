"""IndexService through the real server: create, upsert (idempotent), get, retrieve, delete, stats, drop."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc

GUIDE = """# Deployment guide

## Rolling restarts

Drain each replica before restarting it. The load balancer stops sending traffic once the
health check reports NOT_SERVING, so in-flight requests finish within the grace period.

## Backups

Take a snapshot of every collection directory nightly and keep seven days of copies.
"""
NOTES = "Compaction rewrites the vector index without tombstoned rows.\n\nRun it off-peak."


def _docs(*docs: common.Document) -> list[ix.UpsertDocumentsRequest]:
    return [ix.UpsertDocumentsRequest(collection="ops", documents=list(docs))]


@pytest.fixture(scope="module")
def ops(index: ix_grpc.IndexServiceStub) -> str:
    index.CreateCollection(
        ix.CreateCollectionRequest(name="ops", description="runbooks"), timeout=30
    )
    yield "ops"
    index.DropCollection(ix.DropCollectionRequest(name="ops"), timeout=30)


def test_upsert_is_idempotent_and_updates_replace_chunks(
    index: ix_grpc.IndexServiceStub, ops: str
) -> None:
    guide = common.Document(
        document_id="guide.md", text=GUIDE, source_path="docs/guide.md", metadata={"team": "sre"}
    )
    notes = common.Document(
        document_id="notes.txt", text=NOTES, source_type=common.SOURCE_TYPE_TEXT
    )
    first = index.UpsertDocuments(iter(_docs(guide, notes)), timeout=60)
    assert (first.upserted, first.unchanged, first.failed) == (2, 0, 0)
    again = index.UpsertDocuments(iter(_docs(guide, notes)), timeout=60)
    assert (again.upserted, again.unchanged) == (0, 2)
    assert again.sequence == first.sequence
    changed = common.Document(
        document_id="notes.txt",
        text=NOTES + "\n\nNever during backups.",
        source_type=common.SOURCE_TYPE_TEXT,
    )
    third = index.UpsertDocuments(iter(_docs(changed)), timeout=60)
    assert third.upserted == 1 and third.sequence > first.sequence
    got = index.GetDocument(
        ix.GetDocumentRequest(collection=ops, document_id="notes.txt"), timeout=30
    )
    assert got.document.text.endswith("Never during backups.")
    assert [c.chunk_id for c in got.chunks] == [f"notes.txt#{i}" for i in range(len(got.chunks))]
    guide_got = index.GetDocument(
        ix.GetDocumentRequest(collection=ops, document_id="guide.md"), timeout=30
    )
    assert [list(c.section_path) for c in guide_got.chunks] == [
        ["Deployment guide", "Rolling restarts"],
        ["Deployment guide", "Backups"],
    ]
    assert guide_got.chunks[0].metadata["team"] == "sre"


def test_failed_documents_do_not_stop_the_stream(index: ix_grpc.IndexServiceStub, ops: str) -> None:
    good = common.Document(document_id="ok.md", text="# Title\n\nSome real content here.")
    empty = common.Document(document_id="empty.md", text="   ")
    pdf = common.Document(
        document_id="scan.pdf", content=b"%PDF-1.4", source_type=common.SOURCE_TYPE_PDF
    )
    response = index.UpsertDocuments(iter(_docs(empty, pdf, good)), timeout=60)
    outcomes = [(r.document_id, r.outcome) for r in response.results]
    assert outcomes == [
        ("empty.md", ix.DOCUMENT_OUTCOME_FAILED),
        ("scan.pdf", ix.DOCUMENT_OUTCOME_FAILED),
        ("ok.md", ix.DOCUMENT_OUTCOME_UPSERTED),
    ]
    assert response.results[0].error == "documents.text: document 'empty.md' has no indexable text"
    assert response.results[1].error.startswith(
        "documents.content: document 'scan.pdf' is not a readable PDF"
    )


def test_deleted_documents_never_come_back(
    index: ix_grpc.IndexServiceStub, retrieval: rs_grpc.RetrievalServiceStub, ops: str
) -> None:
    index.UpsertDocuments(
        iter(
            _docs(
                common.Document(
                    document_id="tmp.md",
                    text="# Kraken\n\nThe kraken protocol rotates keys hourly.",
                )
            )
        ),
        timeout=60,
    )
    request = rs.RetrieveRequest(query="kraken protocol key rotation", collection=ops, top_k=3)
    assert retrieval.Retrieve(request, timeout=30).hits[0].chunk.document_id == "tmp.md"
    deleted = index.DeleteDocuments(
        ix.DeleteDocumentsRequest(collection=ops, document_ids=["tmp.md", "nope"]), timeout=30
    )
    assert deleted.deleted == 1 and list(deleted.not_found) == ["nope"]
    for mode in (rs.RETRIEVAL_MODE_DENSE, rs.RETRIEVAL_MODE_LEXICAL, rs.RETRIEVAL_MODE_HYBRID):
        request.hybrid.mode = mode
        hits = retrieval.Retrieve(request, timeout=30).hits
        assert "tmp.md" not in {h.chunk.document_id for h in hits}


def test_stats_and_list(index: ix_grpc.IndexServiceStub, ops: str) -> None:
    stats = index.Stats(ix.StatsRequest(collection=ops), timeout=30)
    assert stats.collection.document_count >= 2
    assert stats.dense_sequence == stats.lexical_sequence == stats.sequence
    assert stats.collection.embedding_dim == 384
    assert (stats.dense_engine, stats.dense_device) == ("faiss-auto", "cpu")  # the default kind
    assert stats.collection.dense_index.kind == ix.DENSE_INDEX_KIND_AUTO
    assert stats.dense_memory_bytes >= stats.dense_vectors * 384 * 4
    assert stats.device_memory_total_bytes == stats.device_memory_allocated_bytes == 0
    names = [
        c.name for c in index.ListCollections(ix.ListCollectionsRequest(), timeout=30).collections
    ]
    assert names == sorted(names) and {"default", "ops"} <= set(names)


@pytest.mark.parametrize(
    ("call", "code", "details"),
    [
        (
            lambda s: s.CreateCollection(ix.CreateCollectionRequest(name="default")),
            grpc.StatusCode.ALREADY_EXISTS,
            "collection 'default' already exists",
        ),
        (
            lambda s: s.Stats(ix.StatsRequest(collection="ghost")),
            grpc.StatusCode.NOT_FOUND,
            "collection 'ghost' does not exist; create it with CreateCollection or list collections with ListCollections",
        ),
        (
            lambda s: s.GetDocument(ix.GetDocumentRequest(document_id="nope.md")),
            grpc.StatusCode.NOT_FOUND,
            "document 'nope.md' does not exist in collection 'default'",
        ),
        (
            lambda s: s.DeleteDocuments(ix.DeleteDocumentsRequest()),
            grpc.StatusCode.INVALID_ARGUMENT,
            "document_ids: send between 1 and 10000 ids; got 0",
        ),
        (
            lambda s: s.CreateCollection(
                ix.CreateCollectionRequest(name="x", dense_index=ix.DenseIndexConfig(hnsw_m=1))
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "dense_index.hnsw_m: must be between 4 and 128",
        ),
    ],
    ids=["create-duplicate", "stats-unknown", "get-unknown", "delete-none", "bad-hnsw-m"],
)
def test_index_errors(
    index: ix_grpc.IndexServiceStub, call, code: grpc.StatusCode, details: str
) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as info:
        call(index)
    assert info.value.code() is code
    assert info.value.details() == details


def _proto_comment(field: str) -> str:
    """The comment lines right above `field` in index_service.proto."""
    proto = Path(__file__).resolve().parents[2] / "proto/groundwire/v1/index_service.proto"
    lines = proto.read_text("utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"uint64 {field} ="))
    above = []
    for line in reversed(lines[:at]):
        if not line.strip().startswith("//"):
            break
        above.insert(0, line.strip().removeprefix("//").strip())
    return " ".join(above)


def test_stats_dense_vectors_counts_live_vectors_as_its_proto_says(
    index: ix_grpc.IndexServiceStub,
) -> None:
    """HNSW keeps deleted vectors as tombstones: dense_vectors excludes them, tombstones counts
    them until compaction, exactly as the Stats comments say."""
    assert "excluded" in _proto_comment("dense_vectors")
    assert "until compaction" in _proto_comment("tombstones")
    hnsw = ix.DenseIndexConfig(kind=ix.DENSE_INDEX_KIND_HNSW)
    index.CreateCollection(ix.CreateCollectionRequest(name="tombs", dense_index=hnsw), timeout=30)
    try:
        docs = [
            common.Document(document_id="guide.md", text=GUIDE),
            common.Document(document_id="notes.md", text=NOTES),
        ]
        request = ix.UpsertDocumentsRequest(collection="tombs", documents=docs)
        index.UpsertDocuments(iter([request]), timeout=60)
        before = index.Stats(ix.StatsRequest(collection="tombs"), timeout=30)
        assert before.dense_vectors == before.collection.chunk_count > 0
        assert before.tombstones == 0
        index.DeleteDocuments(
            ix.DeleteDocumentsRequest(collection="tombs", document_ids=["guide.md"]), timeout=30
        )
        after = index.Stats(ix.StatsRequest(collection="tombs"), timeout=30)
        assert after.dense_vectors == after.collection.chunk_count < before.dense_vectors
        assert after.tombstones == before.dense_vectors - after.dense_vectors
        index.CompactCollection(ix.CompactCollectionRequest(collection="tombs"), timeout=60)
        compacted = index.Stats(ix.StatsRequest(collection="tombs"), timeout=30)
        assert (compacted.dense_vectors, compacted.tombstones) == (after.dense_vectors, 0)
    finally:
        index.DropCollection(ix.DropCollectionRequest(name="tombs"), timeout=30)
