"""Deleted content never comes back from the retrieval cache, whatever replaced the collection.

The cache keys a result by the collection's version (incarnation, store sequence, memories): a
dropped and re-created collection, or a restored snapshot, gets a new incarnation, so an old
result can never match, even when the new store reaches the same sequence number again.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest

from core.cache.retrieval_cache import RetrievalCache
from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.catalog.maintenance import CollectionMaintenance
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)
from core.indexer import Indexer
from core.models import Document
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest, RetrievalResult
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.conftest import make_settings
from tests.server_harness import ServerThread

QUERY = "How often are the vault passwords rotated?"
DROPPED = "The vault passwords are rotated every ninety days by the security team."
NEWER = "Lunch is served in the cafeteria on the second floor at noon."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    running = ServerThread(make_settings(tmp_path_factory.mktemp("versions"), seed_demo=False))
    running.start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def stubs(
    server: ServerThread,
) -> Iterator[tuple[ix_grpc.IndexServiceStub, rs_grpc.RetrievalServiceStub]]:
    with grpc.insecure_channel(server.target) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        yield ix_grpc.IndexServiceStub(channel), rs_grpc.RetrievalServiceStub(channel)


def _upsert(index: ix_grpc.IndexServiceStub, collection: str, document_id: str, text: str) -> int:
    document = common.Document(document_id=document_id, text=text)
    request = ix.UpsertDocumentsRequest(collection=collection, documents=[document])
    response = index.UpsertDocuments(iter([request]), timeout=60)
    assert response.upserted == 1
    return int(response.sequence)


def _retrieve(retrieval: rs_grpc.RetrievalServiceStub, collection: str) -> rs.RetrieveResponse:
    return retrieval.Retrieve(rs.RetrieveRequest(query=QUERY, collection=collection), timeout=60)


def _documents(response: rs.RetrieveResponse) -> set[str]:
    return {hit.chunk.document_id for hit in response.hits}


def test_drop_and_recreate_never_serves_the_dropped_document(stubs) -> None:  # type: ignore[no-untyped-def]
    index, retrieval = stubs
    index.CreateCollection(ix.CreateCollectionRequest(name="x"))
    first_sequence = _upsert(index, "x", "vault", DROPPED)
    assert _documents(_retrieve(retrieval, "x")) == {"vault"}
    assert _retrieve(retrieval, "x").cache_hit  # cached at the first store's sequence

    index.DropCollection(ix.DropCollectionRequest(name="x"))
    index.CreateCollection(ix.CreateCollectionRequest(name="x"))
    assert _upsert(index, "x", "lunch", NEWER) == first_sequence  # the new store restarts

    after = _retrieve(retrieval, "x")
    assert not after.cache_hit
    assert _documents(after) == {"lunch"}


def test_restore_over_the_collection_never_serves_a_result_of_the_replaced_contents(
    stubs,  # type: ignore[no-untyped-def]
) -> None:
    index, retrieval = stubs
    index.CreateCollection(ix.CreateCollectionRequest(name="restored"))
    _upsert(index, "restored", "lunch", NEWER)
    snapshot = index.SnapshotCollection(ix.SnapshotCollectionRequest(collection="restored"))
    _upsert(index, "restored", "vault", DROPPED)
    cached_at = index.Stats(ix.StatsRequest(collection="restored")).sequence
    assert "vault" in _documents(_retrieve(retrieval, "restored"))
    assert _retrieve(retrieval, "restored").cache_hit

    index.RestoreCollection(
        ix.RestoreCollectionRequest(
            collection="restored", snapshot_id=snapshot.snapshot.snapshot_id
        )
    )
    # The restored store is back at the snapshot's sequence; one write reaches the cached one.
    assert _upsert(index, "restored", "canteen", NEWER + " Dinner at six.") == cached_at

    after = _retrieve(retrieval, "restored")
    assert not after.cache_hit
    assert "vault" not in _documents(after)


def test_restore_in_core_needs_no_invalidation_by_the_caller(tmp_path: Path) -> None:
    """The catalog's restore alone (no server edge around it) keeps the cache right."""
    embedder = SentenceTransformerEmbedder(default_model_path(), "cpu", 16)
    catalog = CollectionCatalog(tmp_path)
    catalog.open_all()
    maintenance = CollectionMaintenance(catalog)
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    indexer = Indexer(embedder, 200, 1 << 20)
    cache: RetrievalCache[RetrievalResult] = RetrievalCache()
    request = RetrievalRequest(query=QUERY, collection="docs", top_k=5)
    try:
        collection = catalog.create(DEFAULT_TENANT, "docs", config)
        indexer.index(collection, [Document("lunch", NEWER)])
        snapshot = maintenance.snapshot(DEFAULT_TENANT, "docs")
        indexer.index(collection, [Document("vault", DROPPED)])
        with ThreadPoolExecutor(2) as pool:
            pipeline = RetrievalPipeline(catalog, embedder, pool, cache=cache)
            assert "vault" in {h.chunk.document_id for h in pipeline.retrieve(request).hits}
            assert pipeline.retrieve(request).cache_hit
            sequence = collection.store.sequence()

            restored = maintenance.restore(DEFAULT_TENANT, "docs", snapshot.snapshot_id, "docs")
            indexer.index(restored, [Document("canteen", NEWER + " Dinner at six.")])
            assert restored.store.sequence() == sequence

            after = pipeline.retrieve(request)
            assert not after.cache_hit
            assert "vault" not in {h.chunk.document_id for h in after.hits}
            assert restored.incarnation != collection.incarnation
    finally:
        catalog.close()
