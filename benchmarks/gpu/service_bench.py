"""groundwire's own numbers: query embedding (direct and micro-batched under N concurrent
callers) and dense search through the engine the factory picks, plus the FAISS CPU reference."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import torch
from bench_timing import Timer

from core.dense.engine_factory import (
    DenseEngine,
    DenseEngineName,
    FaissSupport,
    create_dense_engine,
    probe_faiss,
)
from core.dense.fused_top_k import (
    DEFAULT_CONFIG,
    KernelConfig,
    fused_applies,
    fused_available,
    fused_top_k,
)
from core.dense.spec import DenseIndexSpec
from core.dense.torch_exact import TorchExactIndex
from core.dense.torch_topk import two_stage_top_k
from core.embed.micro_batcher import MicroBatchingEmbedder
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from server.settings import ModelSettings

Row = dict[str, Any]


def single_query_embedding(
    embedder: SentenceTransformerEmbedder,
    queries: list[str],
    timer: Timer,
    eager: SentenceTransformerEmbedder | None = None,
) -> list[Row]:
    """Latency of one query embedded directly: to NumPy on the host, and as a device tensor,
    through `embedder` (CUDA graphs where it captured them) and, given, `eager` (graphs off)."""
    device = embedder.device
    cycle = iter(range(1 << 30))
    rows = []
    for label, model in (("default", embedder), ("eager (cuda_graphs off)", eager)):
        if model is None:
            continue

        def numpy_call(m: SentenceTransformerEmbedder = model) -> object:
            return m.embed_queries([queries[next(cycle) % len(queries)]])

        def tensor_call(m: SentenceTransformerEmbedder = model) -> object:
            return m.embed_queries_tensor([queries[next(cycle) % len(queries)]])

        for path, call in (
            ("numpy (host copy)", numpy_call),
            ("tensor (stays on device)", tensor_call),
        ):
            timing = timer.latency(call, device)
            rows.append(
                {
                    "embedder": label,
                    "query_graphs": model.query_graphs,
                    "path": path,
                    "p50_ms": round(timing.p50_ms, 3),
                    "p99_ms": round(timing.p99_ms, 3),
                }
            )
    return rows


def batched_embedding(
    embedder: SentenceTransformerEmbedder,
    queries: list[str],
    callers: list[int],
    duration_s: float,
    settings: ModelSettings,
) -> list[Row]:
    """Queries/s and latency with N threads each embedding one query at a time, micro-batched."""
    rows = []
    for count in callers:
        batcher = MicroBatchingEmbedder(
            embedder,
            max_batch=settings.query_batch_max,
            max_wait_ms=settings.query_batch_wait_ms,
            max_queue=max(settings.query_queue_max, 4 * count),
        )
        latencies = _run_callers(batcher, queries, count, duration_s)
        stats = batcher.stats()
        batcher.close()
        ordered = sorted(s for samples in latencies for s in samples)
        rows.append(
            {
                "callers": count,
                "queries/s": round(len(ordered) / duration_s, 1),
                "p50_ms": round(1000 * ordered[len(ordered) // 2], 2),
                "p99_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 2),
                "mean_batch": round(stats.mean_batch_size, 1),
                "max_batch": settings.query_batch_max,
            }
        )
    return rows


def _run_callers(
    batcher: MicroBatchingEmbedder, queries: list[str], count: int, duration_s: float
) -> list[list[float]]:
    latencies: list[list[float]] = [[] for _ in range(count)]
    barrier = threading.Barrier(count + 1)
    deadline = [0.0]

    def caller(slot: int) -> None:
        barrier.wait()
        position = slot * 7919
        while time.perf_counter() < deadline[0]:
            position += 1
            started = time.perf_counter()
            batcher.embed_queries([queries[position % len(queries)]])
            latencies[slot].append(time.perf_counter() - started)

    threads = [threading.Thread(target=caller, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    deadline[0] = time.perf_counter() + duration_s
    barrier.wait()
    for thread in threads:
        thread.join(duration_s + 60)
    return latencies


def random_vectors(rows: int, dim: int, seed: int) -> np.ndarray:
    """L2-normalised float32 (rows, dim) random vectors."""
    matrix = np.random.default_rng(seed).standard_normal((rows, dim), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def search_engines(device: str, dim: int) -> list[tuple[str, DenseEngine]]:
    """(role, engine): the factory's choice for `device`; the torch engine on `device` when the
    factory chose another; FAISS CPU flat as the reference when faiss is installed."""
    engine = create_dense_engine(DenseIndexSpec(), dim, device)
    engines = [("engine", engine)]
    if engine.name is not DenseEngineName.TORCH_EXACT:
        torch_only = FaissSupport(installed=False, gpus=0)
        engines.append(
            ("torch", create_dense_engine(DenseIndexSpec(), dim, device, faiss=torch_only))
        )
    if probe_faiss().installed and engine.name is not DenseEngineName.FAISS_FLAT:
        engines.append(("reference", create_dense_engine(DenseIndexSpec(), dim, "cpu")))
    return engines


def dense_search(device: str, rows: int, dim: int, batches: list[int], timer: Timer) -> list[Row]:
    """Top-10 search latency and queries/s of each engine of `search_engines` over `rows` random
    vectors; on CUDA, batch 1 is also timed with the query already on the device (fp16)."""
    engines = search_engines(device, dim)
    for _, engine in engines:
        for start in range(0, rows, 1 << 20):
            chunk = random_vectors(min(rows - start, 1 << 20), dim, seed=start)
            engine.index.add(np.arange(start, start + len(chunk), dtype=np.int64), chunk)
    result: list[Row] = []
    for role, engine in engines:
        for batch in batches:
            queries = random_vectors(batch, dim, seed=10**9 + batch)
            calls: list[tuple[str, object]] = [("numpy", queries)]
            if batch == 1 and engine.device.startswith("cuda"):
                on_device = torch.from_numpy(queries).to(engine.device, torch.float16)
                calls.append(("device tensor", on_device))
            for kind, query in calls:
                for path, fused in _paths(engine, batch):
                    _set_fused(engine, fused)
                    search = engine.index.search
                    timing = timer.latency(lambda q=query, f=search: f(q, 10), engine.device)  # type: ignore[misc]
                    result.append(
                        {
                            "role": role,
                            "engine": str(engine.name),
                            "path": path,
                            "device": engine.device,
                            "rows": rows,
                            "batch": batch,
                            "queries": kind,
                            "p50_ms": round(timing.p50_ms, 3),
                            "p99_ms": round(timing.p99_ms, 3),
                            "queries/s": round(batch / (timing.p50_ms / 1000)),
                        }
                    )
                _set_fused(engine, False)  # the engine's default
    return result


def _paths(engine: DenseEngine, batch: int) -> list[tuple[str, bool]]:
    """(path, fused) to time: the torch engine's matmul path (its default) and, where it applies,
    its fused Triton kernel; one path for the other engines."""
    index = engine.index
    if not isinstance(index, TorchExactIndex) or not fused_available(torch.device(index.device)):
        return [("default", False)]
    if not fused_applies(batch, 10):
        return [("matmul (CUDA graph at batch 1)", False)]
    return [("fused", True), ("matmul (CUDA graph at batch 1)", False)]


def _set_fused(engine: DenseEngine, fused: bool) -> None:
    index = engine.index
    if isinstance(index, TorchExactIndex):
        index.fused = fused and fused_available(torch.device(index.device))


SWEEP = (
    KernelConfig(128, 64, 4),
    KernelConfig(128, 128, 4),
    KernelConfig(256, 64, 4),
    KernelConfig(256, 64, 8),
    KernelConfig(256, 128, 4),
    KernelConfig(256, 128, 8),
    KernelConfig(512, 64, 8),
    KernelConfig(512, 128, 8),
    KernelConfig(1024, 64, 8),
)


def single_query_paths(device: str, rows: int, dim: int, timer: Timer) -> list[Row]:
    """Where one query's dense search time goes (top-10 over `rows`, query on the device): the
    matmul alone, a top-k over all scores alone, the fused kernel alone at each launch shape of
    SWEEP, and the torch engine's whole search with each shape (CUDA with Triton only)."""
    if not fused_available(torch.device(device)):
        return [{"what": "fused kernel", "note": "needs CUDA and Triton"}]
    index = TorchExactIndex.create(dim, device, 1 << 30)
    for start in range(0, rows, 1 << 20):
        chunk = random_vectors(min(rows - start, 1 << 20), dim, seed=start)
        index.add(np.arange(start, start + len(chunk), dtype=np.int64), chunk)
    corpus = torch.from_numpy(random_vectors(rows, dim, seed=1)).to(device, torch.float16)
    query = torch.from_numpy(random_vectors(1, dim, seed=2)).to(device, torch.float16)
    scores = query @ corpus.T
    result: list[Row] = []

    def add(what: str, config: str, call: object) -> None:
        timing = timer.latency(call, device)  # type: ignore[arg-type]
        result.append(
            {"what": what, "config": config, "rows": rows, "p50_ms": round(timing.p50_ms, 3)}
        )

    add("matmul only (fp16 scores)", "-", lambda: query @ corpus.T)
    add("torch.topk(10) over all scores", "-", lambda: torch.topk(scores, 10, dim=1))
    for config in SWEEP:
        label = f"{config.block_n}x{config.block_d}, {config.num_warps} warps" + (
            " (default)" if config == DEFAULT_CONFIG else ""
        )
        add(
            "fused kernel + final top-k",
            label,
            lambda c=config: fused_top_k(query, corpus, None, 10, c),
        )
        index.fused, index.fused_config = True, config
        add("engine search, fused (host results)", label, lambda: index.search(query, 10))
    index.fused, index.fused_config = False, DEFAULT_CONFIG
    add("two-stage top-k(10) over all scores", "-", lambda: two_stage_top_k(scores, 10))
    index.cuda_graphs = False
    add("engine search, eager matmul path", "-", lambda: index.search(query, 10))
    index.cuda_graphs = True
    add("engine search, CUDA graph (default)", "-", lambda: index.search(query, 10))
    captured = f"{index.graph_captures} captured" if index.cuda_graphs else "capture failed"
    result[-1]["config"] = captured
    return result
