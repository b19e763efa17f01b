"""Retrieve through two real gRPC servers over the demo corpus, one on CUDA and one on CPU: the
CUDA server's collection is served by a GPU engine (the torch engine, or FAISS GPU when faiss has
GPUs), queries reach it as device tensors, and its results agree with the CPU reference.

The CUDA server embeds in fp16, so dense scores differ from the fp32 CPU ones by up to
SCORE_TOLERANCE, and hits whose CPU scores lie that close may swap places. Skipped without CUDA.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import torch

from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.settings import ModelSettings
from tests.conftest import make_settings
from tests.server_harness import ServerThread

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
]

SCORE_TOLERANCE = 2e-2
FUSED_TOLERANCE = 5e-2  # min-max normalisation can stretch a dense difference before fusing
QUERIES = (
    "How do I copy a list?",
    "Why are default arguments shared between calls?",
    "What is the GIL?",
    "How do I read a file line by line?",
    "How can I sort a dictionary by value?",
    "What does the yield keyword do?",
    "How do I convert a string to a number?",
    "Why is 0.1 + 0.2 not 0.3?",
)
GPU_ENGINES = {"torch-exact", "faiss-gpu-flat"}


@dataclasses.dataclass
class Servers:
    cpu: rs_grpc.RetrievalServiceStub
    cuda: rs_grpc.RetrievalServiceStub
    cuda_index: ix_grpc.IndexServiceStub


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    cpu_settings = make_settings(Path(tmp_path_factory.mktemp("cpu-data")))
    cuda_settings = dataclasses.replace(
        make_settings(Path(tmp_path_factory.mktemp("cuda-data"))),
        model=ModelSettings(device="cuda"),
    )
    cpu = ServerThread(cpu_settings).start()
    cuda = ServerThread(cuda_settings).start()
    try:
        with grpc.insecure_channel(cpu.target) as a, grpc.insecure_channel(cuda.target) as b:
            yield Servers(
                rs_grpc.RetrievalServiceStub(a),
                rs_grpc.RetrievalServiceStub(b),
                ix_grpc.IndexServiceStub(b),
            )
    finally:
        cuda.stop()
        cpu.stop()


def test_stats_report_a_gpu_engine_holding_every_chunk(servers: Servers) -> None:
    stats = servers.cuda_index.Stats(ix.StatsRequest(), timeout=30)
    assert stats.dense_engine in GPU_ENGINES
    assert stats.dense_device.startswith("cuda")
    assert stats.dense_vectors == stats.collection.chunk_count > 0
    assert stats.dense_memory_bytes >= stats.dense_vectors * 384 * 2  # fp16 rows at least
    assert stats.device_memory_total_bytes > stats.device_memory_reserved_bytes > 0
    if stats.dense_engine == "torch-exact":  # FAISS GPU allocates outside torch
        assert stats.device_memory_allocated_bytes >= stats.dense_memory_bytes


@pytest.mark.parametrize("mode", [rs.RETRIEVAL_MODE_DENSE, rs.RETRIEVAL_MODE_HYBRID])
def test_cuda_results_match_the_cpu_reference(servers: Servers, mode: int) -> None:
    for query in QUERIES:
        request = rs.RetrieveRequest(query=query, top_k=10)
        request.hybrid.mode = mode  # type: ignore[assignment]
        reference = servers.cpu.Retrieve(request, timeout=60).hits
        served = servers.cuda.Retrieve(request, timeout=60).hits
        assert len(served) == len(reference) == 10
        dense_cpu = {
            h.chunk.chunk_id: h.scores.dense for h in reference if h.scores.HasField("dense")
        }
        dense_gpu = {h.chunk.chunk_id: h.scores.dense for h in served if h.scores.HasField("dense")}
        for chunk_id in dense_cpu.keys() & dense_gpu.keys():
            assert dense_gpu[chunk_id] == pytest.approx(dense_cpu[chunk_id], abs=SCORE_TOLERANCE)
        tie = SCORE_TOLERANCE if mode == rs.RETRIEVAL_MODE_DENSE else FUSED_TOLERANCE
        _assert_same_ranking(reference, served, query, tie)


def _assert_same_ranking(
    reference: list[rs.Hit], served: list[rs.Hit], query: str, tolerance: float
) -> None:
    """Same chunk at each rank, except where the reference's scores at neighbouring ranks lie
    within `tolerance` of each other (fp16 may order those either way)."""
    scores = [h.score for h in reference]
    for rank, (want, got) in enumerate(zip(reference, served, strict=True)):
        if want.chunk.chunk_id == got.chunk.chunk_id:
            continue
        neighbours = [scores[i] for i in (rank - 1, rank + 1) if 0 <= i < len(scores)]
        tie = any(abs(scores[rank] - s) <= tolerance for s in neighbours)
        assert tie, f"{query!r} rank {rank + 1}: {got.chunk.chunk_id} != {want.chunk.chunk_id}"
    assert {h.chunk.chunk_id for h in reference[:5]} & {h.chunk.chunk_id for h in served[:5]}


def test_repeated_queries_use_the_device_embedding_cache(servers: Servers) -> None:
    request = rs.RetrieveRequest(query="What is a lambda function?", top_k=5)
    servers.cuda.Retrieve(request, timeout=60)
    request.top_k = 6  # another retrieval-cache key, the same query embedding
    again = servers.cuda.Retrieve(request, timeout=60)
    assert again.embedding_cache_hit and not again.cache_hit
