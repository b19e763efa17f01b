"""API keys, roles and tenant isolation through a real server and real channels."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.api_keys import hash_key, new_key
from server.settings import AuthSettings, StorageBackendKind
from tests.conftest import BACKENDS, fresh_milvus_database, make_settings, milvus_storage
from tests.server_harness import ServerThread

ROLES = ("reader", "writer", "admin")
ACME_SNAPSHOT: list[str] = []  # filled by the `populated` fixture


@dataclasses.dataclass(frozen=True)
class Keys:
    """Plaintext keys of the test key ring, by (tenant, role)."""

    by_role: dict[tuple[str, str], str]

    def metadata(self, tenant: str, role: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.by_role[(tenant, role)]}"),)


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Keys, Path]:
    directory = tmp_path_factory.mktemp("keys")
    by_role = {(t, r): new_key() for t in ("acme", "globex") for r in ROLES}
    entries = [
        f'[[keys]]\nid = "{t}-{r}"\ntenant = "{t}"\nrole = "{r}"\nsha256 = "{hash_key(k)}"\n'
        for (t, r), k in by_role.items()
    ]
    path = directory / "keys.toml"
    path.write_text("\n".join(entries), "utf-8")
    return Keys(by_role), path


@pytest.fixture(scope="module", params=BACKENDS)
def auth_server(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    keys: tuple[Keys, Path],
) -> Iterator[ServerThread]:
    """A server with the test key ring, on each storage backend."""
    data_dir = tmp_path_factory.mktemp("auth-data")
    settings = dataclasses.replace(
        make_settings(data_dir, seed_demo=False), auth=AuthSettings(keys_file=str(keys[1]))
    )
    if request.param == "milvus":
        uri = request.getfixturevalue("milvus_uri")
        storage = milvus_storage(data_dir, uri, fresh_milvus_database(), seed_demo=False)
        settings = dataclasses.replace(settings, storage=storage)
    server = ServerThread(settings).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def stubs(
    auth_server: ServerThread,
) -> Iterator[tuple[ix_grpc.IndexServiceStub, rs_grpc.RetrievalServiceStub]]:
    with grpc.insecure_channel(auth_server.target) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        yield ix_grpc.IndexServiceStub(channel), rs_grpc.RetrievalServiceStub(channel)


def _code(call: object) -> tuple[grpc.StatusCode, str]:
    try:
        call()  # type: ignore[operator]
    except grpc.RpcError as error:
        return error.code(), error.details()
    return grpc.StatusCode.OK, ""


def _doc(document_id: str, text: str) -> common.Document:
    return common.Document(document_id=document_id, text=text, source_path=f"{document_id}.md")


def _in_milvus(server: ServerThread) -> bool:
    return server.settings.storage.backend is StorageBackendKind.MILVUS


MILVUS_SNAPSHOT_REFUSAL = (
    'Snapshot is not available with storage.backend = "milvus": the collections live in Milvus, '
    "which compacts them itself; back them up and restore them with milvus-backup "
    "(https://github.com/zilliztech/milvus-backup)"
)


@pytest.fixture(scope="module")
def populated(stubs, keys, auth_server):  # type: ignore[no-untyped-def]
    index, _ = stubs
    ring, _ = keys
    for tenant, secret_word in (("acme", "anvil"), ("globex", "hammock")):
        admin = ring.metadata(tenant, "admin")
        index.CreateCollection(ix.CreateCollectionRequest(name="docs"), metadata=admin)
        index.CreateCollection(ix.CreateCollectionRequest(name=f"{tenant}-only"), metadata=admin)
        index.UpsertDocuments(
            iter(
                [
                    ix.UpsertDocumentsRequest(
                        collection="docs",
                        documents=[
                            _doc(f"{tenant}-plan", f"# Plan\n\nThe {secret_word} project ships."),
                        ],
                    )
                ]
            ),
            metadata=ring.metadata(tenant, "writer"),
        )
    take = ix.SnapshotCollectionRequest(collection="acme-only")
    acme_admin = ring.metadata("acme", "admin")
    if _in_milvus(auth_server):  # Milvus backs up its own collections
        refused = _code(lambda: index.SnapshotCollection(take, metadata=acme_admin))
        assert refused == (grpc.StatusCode.FAILED_PRECONDITION, MILVUS_SNAPSHOT_REFUSAL)
        ACME_SNAPSHOT[:] = []
        return stubs
    snapshot = index.SnapshotCollection(take, metadata=acme_admin)
    ACME_SNAPSHOT[:] = [snapshot.snapshot.snapshot_id]
    return stubs


def test_missing_malformed_and_unknown_keys_are_unauthenticated(stubs, keys) -> None:  # type: ignore[no-untyped-def]
    index, retrieval = stubs
    request = rs.RetrieveRequest(query="anything")
    assert _code(lambda: retrieval.Retrieve(request)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "missing credentials: send the metadata 'authorization: Bearer <api key>'",
    )
    assert _code(
        lambda: retrieval.Retrieve(request, metadata=(("authorization", "Basic abc"),))
    ) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "malformed 'authorization' metadata: expected 'Bearer <api key>'",
    )
    assert _code(
        lambda: index.ListCollections(
            ix.ListCollectionsRequest(), metadata=(("authorization", "Bearer gw_nope"),)
        )
    ) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "unknown API key; check the key or ask an admin for a new one",
    )


def test_roles_gate_writes_and_administration(populated, keys) -> None:  # type: ignore[no-untyped-def]
    index, retrieval = populated
    ring, _ = keys
    reader = ring.metadata("acme", "reader")
    ok = retrieval.Retrieve(rs.RetrieveRequest(query="anvil", collection="docs"), metadata=reader)
    assert ok.hits and ok.hits[0].chunk.document_id == "acme-plan"
    code, message = _code(
        lambda: index.UpsertDocuments(
            iter([ix.UpsertDocumentsRequest(collection="docs", documents=[_doc("x", "x")])]),
            metadata=reader,
        )
    )
    assert code is grpc.StatusCode.PERMISSION_DENIED
    assert message == (
        "UpsertDocuments requires the writer role; the key 'acme-reader' has the reader role. "
        "Use a key with the writer role"
    )
    writer = ring.metadata("acme", "writer")
    code, message = _code(
        lambda: index.DropCollection(ix.DropCollectionRequest(name="docs"), metadata=writer)
    )
    assert code is grpc.StatusCode.PERMISSION_DENIED
    assert message.startswith("DropCollection requires the admin role")
    high = rs.RetrieveRequest(
        query="anvil", collection="docs", max_risk_level=common.RISK_LEVEL_HIGH
    )
    assert _code(lambda: retrieval.Retrieve(high, metadata=writer))[0] is (
        grpc.StatusCode.PERMISSION_DENIED
    )
    assert retrieval.Retrieve(high, metadata=ring.metadata("acme", "admin")).hits


def test_each_tenant_sees_only_its_own_collections_and_documents(populated, keys) -> None:  # type: ignore[no-untyped-def]
    index, retrieval = populated
    ring, _ = keys
    acme, globex = ring.metadata("acme", "reader"), ring.metadata("globex", "reader")
    listed = index.ListCollections(ix.ListCollectionsRequest(), metadata=acme)
    assert [c.name for c in listed.collections] == ["acme-only", "docs"]
    hits = retrieval.Retrieve(rs.RetrieveRequest(query="anvil", collection="docs"), metadata=globex)
    assert all(h.chunk.document_id.startswith("globex") for h in hits.hits)
    missing = _code(
        lambda: index.Stats(ix.StatsRequest(collection="no-such-thing"), metadata=globex)
    )
    foreign = _code(lambda: index.Stats(ix.StatsRequest(collection="acme-only"), metadata=globex))
    assert foreign == (grpc.StatusCode.NOT_FOUND, missing[1].replace("no-such-thing", "acme-only"))
    code, _ = _code(
        lambda: index.GetDocument(
            ix.GetDocumentRequest(collection="docs", document_id="acme-plan"), metadata=globex
        )
    )
    assert code is grpc.StatusCode.NOT_FOUND


def _probes(name: str) -> dict[str, object]:
    """One call per RPC that names a collection, as (stub attribute, request)."""
    return {
        "Retrieve": ("retrieval", "Retrieve", rs.RetrieveRequest(query="anvil", collection=name)),
        "Answer": (
            "retrieval",
            "Answer",
            rs.AnswerRequest(retrieve=rs.RetrieveRequest(query="anvil", collection=name)),
        ),
        "Stats": ("index", "Stats", ix.StatsRequest(collection=name)),
        "GetDocument": (
            "index",
            "GetDocument",
            ix.GetDocumentRequest(collection=name, document_id="acme-plan"),
        ),
        "DeleteDocuments": (
            "index",
            "DeleteDocuments",
            ix.DeleteDocumentsRequest(collection=name, document_ids=["acme-plan"]),
        ),
        "DropCollection": ("index", "DropCollection", ix.DropCollectionRequest(name=name)),
        "CompactCollection": (
            "index",
            "CompactCollection",
            ix.CompactCollectionRequest(collection=name),
        ),
        "SnapshotCollection": (
            "index",
            "SnapshotCollection",
            ix.SnapshotCollectionRequest(collection=name),
        ),
        "RestoreCollection": (
            "index",
            "RestoreCollection",
            ix.RestoreCollectionRequest(collection=name, snapshot_id="20260101T000000Z-1"),
        ),
        "AddMemories": (
            "index",
            "AddMemories",
            ix.AddMemoriesRequest(collection=name, memories=[ix.Memory(text="probe")]),
        ),
        "ClearCache": ("retrieval", "ClearCache", rs.ClearCacheRequest(collection=name)),
        "ListSnapshots": ("index", "ListSnapshots", ix.ListSnapshotsRequest(collection=name)),
        "DeleteSnapshot": (
            "index",
            "DeleteSnapshot",
            ix.DeleteSnapshotRequest(
                collection=name, snapshot_id=(ACME_SNAPSHOT or ["20260101T000000Z-1"])[0]
            ),
        ),
        "UpsertDocuments": (
            "index",
            "UpsertDocuments",
            iter([ix.UpsertDocumentsRequest(collection=name, documents=[_doc("p", "probe")])]),
        ),
    }


def _invoke(stubs, probe, metadata):  # type: ignore[no-untyped-def]
    index, retrieval = stubs
    stub_name, method, request = probe
    stub = index if stub_name == "index" else retrieval
    call = getattr(stub, method)
    if method == "Answer":
        return _code(lambda: list(call(request, metadata=metadata)))
    return _code(lambda: call(request, metadata=metadata))


@pytest.mark.parametrize("seed", range(4))
def test_randomised_cross_tenant_probes_leak_nothing(
    populated, keys, auth_server, seed: int
) -> None:  # type: ignore[no-untyped-def]
    """globex probing acme's names gets exactly what probing a name that exists nowhere gets."""
    import random

    ring, _ = keys
    rng = random.Random(seed)
    for _ in range(12):
        role = rng.choice(ROLES)
        metadata = ring.metadata("globex", role)
        rpc = rng.choice(sorted(_probes("x")))
        foreign = _invoke(populated, _probes("acme-only")[rpc], metadata)
        nowhere = _invoke(populated, _probes("zz-nowhere")[rpc], metadata)
        assert foreign[0] == nowhere[0], (rpc, role, foreign, nowhere)
        assert foreign[1] == nowhere[1].replace("zz-nowhere", "acme-only"), (rpc, role)
        assert foreign[0] in (
            grpc.StatusCode.NOT_FOUND,
            grpc.StatusCode.PERMISSION_DENIED,
            grpc.StatusCode.OK,  # ListSnapshots of a name without snapshots: an empty list
            *((grpc.StatusCode.FAILED_PRECONDITION,) if _in_milvus(auth_server) else ()),
        )
    # acme's data is untouched by every probe, and its document never shows up for globex
    index, retrieval = populated
    acme = ring.metadata("acme", "reader")
    stats = index.Stats(ix.StatsRequest(collection="docs"), metadata=acme)
    assert stats.collection.document_count == 1
    if _in_milvus(auth_server):  # no snapshots in Milvus mode: the refusal names milvus-backup
        refused = _code(
            lambda: index.ListSnapshots(
                ix.ListSnapshotsRequest(collection="acme-only"), metadata=acme
            )
        )
        assert refused[0] is grpc.StatusCode.FAILED_PRECONDITION and "milvus-backup" in refused[1]
    else:
        listed = index.ListSnapshots(ix.ListSnapshotsRequest(collection="acme-only"), metadata=acme)
        assert [x.snapshot_id for x in listed.snapshots] == ACME_SNAPSHOT
        foreign_list = index.ListSnapshots(
            ix.ListSnapshotsRequest(collection="acme-only"),
            metadata=ring.metadata("globex", "admin"),
        )
        assert not foreign_list.snapshots
    globex_view = retrieval.Retrieve(
        rs.RetrieveRequest(query="anvil project", collection="docs"),
        metadata=ring.metadata("globex", "admin"),
    )
    assert "acme" not in str(globex_view)


def test_client_commands_send_the_configured_key(auth_server, populated, keys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from groundwire import GroundwireError
    from server.commands.client_channel import Endpoint, open_client
    from server.settings import ClientSettings

    ring, _ = keys
    key_file = tmp_path / "key"
    key_file.write_text(ring.by_role[("globex", "reader")] + "\n", "utf-8")
    endpoint = Endpoint(auth_server.target, ClientSettings(api_key_file=str(key_file)))
    with open_client(endpoint) as client:
        assert "globex-only" in [c.name for c in client.list_collections()]
    with open_client(Endpoint(auth_server.target)) as bare:
        with pytest.raises(GroundwireError) as refused:
            bare.list_collections()
    assert refused.value.code is grpc.StatusCode.UNAUTHENTICATED
