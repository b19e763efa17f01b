"""`/metrics` scraped over HTTP from a real server under real traffic, parsed with the Prometheus
client's own parser: counters and histograms move by exactly what the traffic did."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.settings import MetricsSettings
from tests import metric_scrape
from tests.conftest import make_settings, replace_settings
from tests.metric_scrape import Samples
from tests.server_harness import ServerThread

RETRIEVE = {"grpc_service": "groundwire.v1.RetrievalService", "grpc_method": "Retrieve"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    settings = make_settings(tmp_path_factory.mktemp("gw-metrics"))
    settings = replace_settings(settings, metrics=MetricsSettings(enabled=True, port=0))
    running = ServerThread(settings).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def channel(server: ServerThread) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.target) as chan:
        yield chan


def scrape(server: ServerThread) -> tuple[str, Samples]:
    """GET /metrics: the content type and every sample by (name, labels)."""
    assert server.server is not None and server.server.telemetry is not None
    got = metric_scrape.scrape(server.server.telemetry.metrics_port, timeout_s=10)
    return got.content_type, got.samples


def value(samples: Samples, name: str, labels: Mapping[str, str] | None = None) -> float:
    """The sample's value; 0 when the series does not exist yet."""
    return samples.get((name, frozenset((labels or {}).items())), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """Sum over every series of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, lbls), v in samples.items() if n == name and wanted <= set(lbls))


def test_retrieve_traffic_moves_request_stage_cache_and_batch_series(
    server: ServerThread, channel: grpc.Channel
) -> None:
    stub = rs_grpc.RetrievalServiceStub(channel)
    content_type, before = scrape(server)
    assert content_type.startswith("text/plain; version=0.0.4")
    queries = [f"how do I sort a list, variant {n}" for n in range(6)]
    with ThreadPoolExecutor(6) as pool:  # concurrent: the batcher may gather several
        replies = list(
            pool.map(lambda q: stub.Retrieve(rs.RetrieveRequest(query=q), timeout=60), queries)
        )
    assert all(r.hits for r in replies)
    stub.Retrieve(rs.RetrieveRequest(query=queries[0]), timeout=60)  # a retrieval cache hit
    with pytest.raises(grpc.RpcError) as refused:
        stub.Retrieve(rs.RetrieveRequest(query="x", collection="nowhere"), timeout=30)
    assert refused.value.code() is grpc.StatusCode.NOT_FOUND, refused.value
    _, after = scrape(server)

    ok = {**RETRIEVE, "grpc_type": "unary", "grpc_code": "OK"}
    missing = {**RETRIEVE, "grpc_type": "unary", "grpc_code": "NOT_FOUND"}
    started = {**RETRIEVE, "grpc_type": "unary"}
    assert (
        value(after, "grpc_server_handled_total", ok)
        - value(before, "grpc_server_handled_total", ok)
        == 7
    )
    assert (
        value(after, "grpc_server_handled_total", missing)
        - value(before, "grpc_server_handled_total", missing)
        == 1
    )
    assert (
        value(after, "grpc_server_started_total", started)
        - value(before, "grpc_server_started_total", started)
        == 8
    )
    latency = "grpc_server_handling_seconds_count"
    assert value(after, latency, ok) - value(before, latency, ok) == 7
    assert value(after, "grpc_server_handling_seconds_sum", ok) > value(
        before, "grpc_server_handling_seconds_sum", ok
    )
    # six ran the pipeline; the cache hit ran no stage
    for stage in ("preprocess", "embed", "dense", "lexical", "fuse", "context"):
        labels = {"pipeline": "retrieve", "stage": stage}
        count = "groundwire_stage_duration_seconds_count"
        assert value(after, count, labels) - value(before, count, labels) == 6, stage
    hits, misses = "groundwire_cache_hits_total", "groundwire_cache_misses_total"
    retrieval = {"cache": "retrieval"}
    assert value(after, hits, retrieval) - value(before, hits, retrieval) == 1
    assert value(after, misses, retrieval) - value(before, misses, retrieval) == 6
    embedding = {"cache": "embedding"}
    assert value(after, misses, embedding) - value(before, misses, embedding) == 6
    # six query texts went through the batcher in 1-6 forward passes
    assert (
        value(after, "groundwire_embed_batch_size_sum")
        - value(before, "groundwire_embed_batch_size_sum")
        == 6
    )
    batches = value(after, "groundwire_embed_batch_size_count") - value(
        before, "groundwire_embed_batch_size_count"
    )
    assert 1 <= batches <= 6
    busy = "groundwire_embed_batch_seconds_total"
    assert value(after, busy) > value(before, busy)  # the model ran for those passes
    assert value(after, "groundwire_embed_queue_depth") == 0
    assert value(after, "process_resident_memory_bytes") > 0
    assert value(after, "groundwire_ready") == 1


def test_upsert_and_answer_move_index_and_generator_series(
    server: ServerThread, channel: grpc.Channel
) -> None:
    index = ix_grpc.IndexServiceStub(channel)
    index.CreateCollection(ix.CreateCollectionRequest(name="measured"), timeout=30)
    labels = {"tenant": "default", "collection": "measured"}
    _, before = scrape(server)
    assert value(before, "groundwire_collection_documents", labels) == 0
    docs = [
        common.Document(document_id=f"d{n}.md", text=f"# Note {n}\n\nFerries leave at {n} am.")
        for n in range(3)
    ]
    index.UpsertDocuments(
        iter([ix.UpsertDocumentsRequest(collection="measured", documents=docs)]), timeout=60
    )
    stub = rs_grpc.RetrievalServiceStub(channel)
    retrieve = rs.RetrieveRequest(query="when do ferries leave", collection="measured", top_k=2)
    events = list(stub.Answer(rs.AnswerRequest(retrieve=retrieve), timeout=120))
    summary = events[-1].summary
    index.DeleteDocuments(
        ix.DeleteDocumentsRequest(collection="measured", document_ids=["d0.md"]), timeout=30
    )
    _, after = scrape(server)

    assert value(after, "groundwire_collection_documents", labels) == 2
    stats = index.Stats(ix.StatsRequest(collection="measured"), timeout=30)
    assert value(after, "groundwire_collection_chunks", labels) == stats.collection.chunk_count
    assert value(after, "groundwire_collection_vectors", labels) == stats.dense_vectors
    assert value(after, "groundwire_collection_tombstones", labels) == stats.tombstones
    chunk = {"pipeline": "index", "stage": "chunk"}
    count = "groundwire_stage_duration_seconds_count"
    assert value(after, count, chunk) - value(before, count, chunk) == 3
    for stage in ("prompt", "generate", "citation_check"):
        answer = {"pipeline": "answer", "stage": stage}
        assert value(after, count, answer) - value(before, count, answer) == 1, stage
    tokens = "groundwire_generator_tokens_total"
    completion = {"generator": "extractive", "kind": "completion"}
    assert (
        value(after, tokens, completion) - value(before, tokens, completion)
        == summary.usage.completion_tokens
        > 0
    )
    ttft = "groundwire_generator_time_to_first_token_seconds_count"
    assert (
        value(after, ttft, {"generator": "extractive"})
        - value(before, ttft, {"generator": "extractive"})
        == 1
    )
    upsert = {
        "grpc_service": "groundwire.v1.IndexService",
        "grpc_method": "UpsertDocuments",
        "grpc_type": "client_stream",
        "grpc_code": "OK",
    }
    assert (
        value(after, "grpc_server_handled_total", upsert)
        - value(before, "grpc_server_handled_total", upsert)
        == 1
    )
    answered = {
        "grpc_service": "groundwire.v1.RetrievalService",
        "grpc_method": "Answer",
        "grpc_type": "server_stream",
        "grpc_code": "OK",
    }
    assert (
        value(after, "grpc_server_handled_total", answered)
        - value(before, "grpc_server_handled_total", answered)
        == 1
    )
