"""Stateless replicas over one Milvus: two `groundwire serve` processes with
`storage.backend = "milvus"` share a milvus-lite server over TCP. A write through one is read
through the other, a delete through one is never served by the other (retrieval caches on),
file-level maintenance is refused naming milvus-backup, and a server without pymilvus refuses to
start, naming the install command."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.conftest import fresh_milvus_database
from tests.serve_subprocess import ServeSubprocess

QUERY = "which harbour keeps the lanterns lit"
SECRET = "# Harbour\n\nThe Quillon harbour keeps its lanterns lit with whale oil."


class Replica:
    """One server process and its stubs."""

    def __init__(self, server: ServeSubprocess) -> None:
        self.server = server
        self.channel = grpc.insecure_channel(server.target)
        self.index = ix_grpc.IndexServiceStub(self.channel)
        self.retrieval = rs_grpc.RetrievalServiceStub(self.channel)

    def retrieve_ids(self, collection: str = "shared") -> list[str]:
        reply = self.retrieval.Retrieve(
            rs.RetrieveRequest(query=QUERY, collection=collection, top_k=5)
        )
        return [hit.chunk.document_id for hit in reply.hits]

    def upsert(self, document_id: str, text: str, collection: str = "shared") -> None:
        document = common.Document(document_id=document_id, text=text)
        request = ix.UpsertDocumentsRequest(collection=collection, documents=[document])
        self.index.UpsertDocuments(iter([request]))

    def close(self) -> None:
        self.channel.close()
        self.server.stop()


def milvus_env(uri: str, database: str) -> dict[str, str]:
    return {
        "GROUNDWIRE_STORAGE__BACKEND": "milvus",
        "GROUNDWIRE_STORAGE__MILVUS_URI": uri,
        "GROUNDWIRE_STORAGE__MILVUS_DATABASE": database,
    }


@pytest.fixture(scope="module")
def replicas(
    milvus_uri: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Replica, Replica]]:
    env = milvus_env(milvus_uri, fresh_milvus_database())
    started: list[Replica] = []
    try:
        for name in ("a", "b"):
            root = tmp_path_factory.mktemp(f"replica-{name}")
            server = ServeSubprocess.start(root / "data", root / "server.log", env)
            started.append(Replica(server))
        yield started[0], started[1]
    finally:
        for replica in started:
            replica.close()


def test_a_write_through_one_replica_is_read_through_the_other(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    a.index.CreateCollection(ix.CreateCollectionRequest(name="shared"))
    a.upsert("harbour", SECRET)
    a.upsert("weather", "# Weather\n\nRain falls on the hills in spring.")
    assert b.retrieve_ids()[0] == "harbour"
    listed = b.index.ListCollections(ix.ListCollectionsRequest())
    assert "shared" in [c.name for c in listed.collections]
    stats = b.index.Stats(ix.StatsRequest(collection="shared"))
    assert stats.collection.document_count == 2
    got = b.index.GetDocument(ix.GetDocumentRequest(collection="shared", document_id="harbour"))
    assert got.document.text == SECRET


def test_a_delete_through_one_replica_is_never_served_by_the_other(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    for _ in range(2):  # the second read is served from b's retrieval cache
        assert "harbour" in b.retrieve_ids()
    a.index.DeleteDocuments(
        ix.DeleteDocumentsRequest(collection="shared", document_ids=["harbour"])
    )
    assert "harbour" not in b.retrieve_ids()
    assert "harbour" not in a.retrieve_ids()
    a.upsert("harbour", SECRET.replace("whale oil", "olive oil"))  # back, new content
    reply = b.retrieval.Retrieve(rs.RetrieveRequest(query=QUERY, collection="shared", top_k=1))
    assert "olive oil" in reply.hits[0].chunk.text


def test_file_maintenance_is_refused_naming_milvus_backup(
    replicas: tuple[Replica, Replica],
) -> None:
    a, _ = replicas
    calls = {
        "Compact": lambda: a.index.CompactCollection(
            ix.CompactCollectionRequest(collection="shared")
        ),
        "Snapshot": lambda: a.index.SnapshotCollection(
            ix.SnapshotCollectionRequest(collection="shared")
        ),
        "Restore": lambda: a.index.RestoreCollection(
            ix.RestoreCollectionRequest(collection="shared", snapshot_id="20260101T000000Z-1")
        ),
    }
    for operation, call in calls.items():
        with pytest.raises(grpc.RpcError) as caught:
            call()
        assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert caught.value.details() == (
            f'{operation} is not available with storage.backend = "milvus": the collections '
            "live in Milvus, which compacts them itself; back them up and restore them with "
            "milvus-backup (https://github.com/zilliztech/milvus-backup)"
        )


def test_tuning_is_refused_in_milvus_mode(replicas: tuple[Replica, Replica]) -> None:
    """A tuned model would live on one replica's disk; every replica serves the same corpus."""
    a, b = replicas
    before = b.retrieve_ids()
    with pytest.raises(grpc.RpcError) as caught:
        a.index.TuneCollection(ix.TuneCollectionRequest(collection="shared", max_steps=1))
    assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert 'storage.backend = "milvus"' in caught.value.details()
    assert 'tune with storage.backend = "local"' in caught.value.details()
    assert b.retrieve_ids() == before


def test_without_pymilvus_a_milvus_server_refuses_to_start(tmp_path: Path) -> None:
    hidden = tmp_path / "no-pymilvus"
    hidden.mkdir()
    # an importable `pymilvus` that fails like a missing one (the venv has the real package)
    (hidden / "pymilvus.py").write_text("raise ImportError('No module named pymilvus')\n")
    import os

    env = milvus_env("http://127.0.0.1:1", "unused")
    env["PYTHONPATH"] = f"{hidden}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    with pytest.raises(RuntimeError) as caught:
        ServeSubprocess.start(tmp_path / "data", tmp_path / "server.log", env, timeout_s=120)
    assert (
        'storage.backend = "milvus" needs the pymilvus client, which is not installed: '
        "pip install 'groundwire[milvus]'"
    ) in str(caught.value)


def test_a_collection_dropped_through_one_replica_is_not_found_through_the_other(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    a.index.CreateCollection(ix.CreateCollectionRequest(name="fleeting"))
    a.upsert("harbour", SECRET, collection="fleeting")
    for _ in range(2):  # b opens it, then serves the second read from its cache
        assert b.retrieve_ids("fleeting") == ["harbour"]
    a.index.DropCollection(ix.DropCollectionRequest(name="fleeting"))
    with pytest.raises(grpc.RpcError) as local:
        a.retrieve_ids("fleeting")
    with pytest.raises(grpc.RpcError) as remote:
        b.retrieve_ids("fleeting")
    assert remote.value.code() is grpc.StatusCode.NOT_FOUND
    assert remote.value.details() == local.value.details()
    with pytest.raises(grpc.RpcError) as stats:
        b.index.Stats(ix.StatsRequest(collection="fleeting"))
    assert stats.value.code() is grpc.StatusCode.NOT_FOUND
    listed = b.index.ListCollections(ix.ListCollectionsRequest())
    assert "fleeting" not in [c.name for c in listed.collections]


def test_a_collection_re_created_through_one_replica_is_served_new_by_the_other(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    a.index.CreateCollection(ix.CreateCollectionRequest(name="reborn"))
    a.upsert("harbour", SECRET, collection="reborn")
    for _ in range(2):  # the second read is served from b's retrieval cache
        assert b.retrieve_ids("reborn") == ["harbour"]
    a.index.DropCollection(ix.DropCollectionRequest(name="reborn"))
    a.index.CreateCollection(ix.CreateCollectionRequest(name="reborn"))
    assert b.retrieve_ids("reborn") == []  # the new incarnation is empty
    a.upsert("lighthouse", SECRET.replace("harbour", "lighthouse"), collection="reborn")
    assert b.retrieve_ids("reborn") == ["lighthouse"]
    stats = b.index.Stats(ix.StatsRequest(collection="reborn"))
    assert stats.collection.document_count == 1


def memory_ids(replica: Replica, collection: str) -> list[str]:
    reply = replica.retrieval.Retrieve(
        rs.RetrieveRequest(query=QUERY, collection=collection, top_k=5, use_memory=True)
    )
    return [
        h.chunk.chunk_id for h in reply.hits if h.chunk.source_type == common.SOURCE_TYPE_MEMORY
    ]


def test_a_memory_added_through_one_replica_is_used_through_the_other(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    a.index.CreateCollection(ix.CreateCollectionRequest(name="remembering"))
    a.upsert("weather", "# Weather\n\nRain falls on the hills in spring.", collection="remembering")
    for _ in range(2):  # the second read is served from b's retrieval cache
        assert memory_ids(b, "remembering") == []
    memory = ix.Memory(text="The user keeps the harbour lanterns lit with whale oil.", importance=1)
    added = a.index.AddMemories(
        ix.AddMemoriesRequest(collection="remembering", memories=[memory])
    ).memory_ids
    assert len(added) == 1 and added[0].startswith("memory-")
    assert memory_ids(b, "remembering") == list(added)
    assert memory_ids(a, "remembering") == list(added)
    assert b.index.Stats(ix.StatsRequest(collection="remembering")).memories == 1
    more = b.index.AddMemories(
        ix.AddMemoriesRequest(
            collection="remembering", memories=[ix.Memory(text="The harbour lanterns are lit.")]
        )
    ).memory_ids
    assert set(more).isdisjoint(added)  # numbers are unique across replicas
    assert set(memory_ids(a, "remembering")) == {*added, *more}


def test_memories_of_a_dropped_collection_are_never_used_again(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    a.index.CreateCollection(ix.CreateCollectionRequest(name="amnesia"))
    a.upsert("weather", "# Weather\n\nRain falls on the hills in spring.", collection="amnesia")
    memory = ix.Memory(text="The user keeps the harbour lanterns lit with whale oil.", importance=1)
    a.index.AddMemories(ix.AddMemoriesRequest(collection="amnesia", memories=[memory]))
    for _ in range(2):  # the second read is served from b's retrieval cache
        assert len(memory_ids(b, "amnesia")) == 1
    a.index.DropCollection(ix.DropCollectionRequest(name="amnesia"))
    a.index.CreateCollection(ix.CreateCollectionRequest(name="amnesia"))
    a.upsert("weather", "# Weather\n\nRain falls on the hills in spring.", collection="amnesia")
    assert memory_ids(b, "amnesia") == []
    assert memory_ids(a, "amnesia") == []
    assert b.index.Stats(ix.StatsRequest(collection="amnesia")).memories == 0
