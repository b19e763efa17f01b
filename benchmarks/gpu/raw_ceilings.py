"""Raw hardware ceilings: memory copy bandwidth, matmul rate, matmul + top-k over a corpus, the
encoder's forward pass at many batch sizes, and the encoder replayed as a CUDA graph.

These use torch directly (no groundwire code): they are what the service numbers are held to.
Every function returns plain dicts (JSON-able rows).
"""

from __future__ import annotations

from typing import Any

import torch
from bench_timing import Timer

Row = dict[str, Any]


def corpus_dtype(device: str) -> torch.dtype:
    """fp16 on CUDA (as the torch engine stores it), fp32 on CPU."""
    return torch.float16 if device.startswith("cuda") else torch.float32


def copy_bandwidth(device: str, nbytes: int, timer: Timer) -> Row:
    """Device memory copy rate: bytes read + written per second, in GB/s."""
    source = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(1)
    target = torch.empty_like(source)
    seconds = timer.back_to_back(lambda: target.copy_(source), device)
    return {"bytes": nbytes, "GB/s": round(2 * nbytes / seconds / 1e9, 1)}


def matmul_rate(device: str, size: int, timer: Timer) -> Row:
    """Square matmul rate in TFLOP/s (fp16 on CUDA, fp32 on CPU)."""
    dtype = corpus_dtype(device)
    a = torch.randn(size, size, dtype=dtype, device=device)
    b = torch.randn(size, size, dtype=dtype, device=device)
    seconds = timer.back_to_back(lambda: torch.matmul(a, b), device)
    return {"size": size, "dtype": str(dtype), "TFLOP/s": round(2 * size**3 / seconds / 1e12, 4)}


def random_corpus(rows: int, dim: int, device: str, chunk: int = 1 << 20) -> torch.Tensor:
    """L2-normalised random rows, (rows, dim) in `corpus_dtype`, built chunk by chunk."""
    corpus = torch.empty((rows, dim), dtype=corpus_dtype(device), device=device)
    generator = torch.Generator(device=device).manual_seed(0)
    for start in range(0, rows, chunk):
        stop = min(rows, start + chunk)
        block = torch.randn((stop - start, dim), generator=generator, device=device)
        corpus[start:stop] = torch.nn.functional.normalize(block, dim=1).to(corpus.dtype)
    return corpus


def raw_top_k(queries: torch.Tensor, corpus: torch.Tensor, k: int, max_scores: int) -> torch.Tensor:
    """Top-k positions by inner product, tiled so no score block exceeds `max_scores` elements."""
    rows = max(k, max_scores // max(1, queries.shape[0]))
    best_scores: torch.Tensor | None = None
    best_positions: torch.Tensor | None = None
    for start in range(0, corpus.shape[0], rows):
        scores = queries @ corpus[start : start + rows].T
        top_scores, top_positions = torch.topk(scores, min(k, scores.shape[1]), dim=1)
        top_positions += start
        if best_scores is None or best_positions is None:
            best_scores, best_positions = top_scores, top_positions
            continue
        merged = torch.cat([best_scores, top_scores], dim=1)
        best_scores, order = torch.topk(merged, min(k, merged.shape[1]), dim=1)
        best_positions = torch.gather(torch.cat([best_positions, top_positions], 1), 1, order)
    assert best_positions is not None
    return best_positions


def matmul_top_k(
    corpus: torch.Tensor,
    batches: list[int],
    k: int,
    bandwidth_gbs: float,
    tflops: float,
    timer: Timer,
) -> list[Row]:
    """Raw matmul + top-k over `corpus` per query batch, with its memory and compute floors.

    Memory floor: reading the corpus once at the measured copy rate; compute floor: the matmul's
    FLOPs at the measured square-matmul rate.
    """
    device = str(corpus.device)
    rows, dim = corpus.shape
    corpus_bytes = corpus.numel() * corpus.element_size()
    result: list[Row] = []
    for batch in batches:
        queries = random_corpus(batch, dim, device)
        timing = timer.latency(lambda q=queries: raw_top_k(q, corpus, k, 1 << 30), device)
        result.append(
            {
                "rows": rows,
                "batch": batch,
                "p50_ms": round(timing.p50_ms, 3),
                "queries/s": round(batch / (timing.p50_ms / 1000)),
                "memory_floor_ms": round(1000 * corpus_bytes / (bandwidth_gbs * 1e9), 3),
                "compute_floor_ms": round(1000 * 2 * batch * rows * dim / (tflops * 1e12), 3)
                if tflops > 0
                else None,
            }
        )
    return result


def encoder_inputs(model: Any, batch: int, seq: int) -> dict[str, torch.Tensor]:
    """Token ids (random, non-special) and an all-ones mask for `batch` texts of `seq` tokens."""
    device = next(model.parameters()).device
    vocab = int(model.config.vocab_size)
    ids = torch.randint(1000, vocab, (batch, seq), device=device)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def encode(model: Any, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    """Forward pass + mean pooling + L2 normalisation (what the embedder computes per batch)."""
    hidden = model(**inputs).last_hidden_state
    mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
    return torch.nn.functional.normalize(pooled, dim=1)


@torch.inference_mode()
def model_forward(model: Any, batches: list[int], seq: int, timer: Timer) -> list[Row]:
    """Raw encoder throughput (sentences/s) per batch size at sequence length `seq`."""
    device = str(next(model.parameters()).device)
    rows: list[Row] = []
    for batch in batches:
        inputs = encoder_inputs(model, batch, seq)
        timing = timer.latency(lambda i=inputs: encode(model, i), device)
        rows.append(
            {
                "batch": batch,
                "seq": seq,
                "p50_ms": round(timing.p50_ms, 3),
                "sentences/s": round(batch / (timing.p50_ms / 1000)),
            }
        )
    return rows


def cuda_graph_encoder(model: Any, buckets: list[int], seq: int, timer: Timer) -> list[Row]:
    """Eager vs CUDA-graph-replayed encoder latency per batch bucket (CUDA only)."""
    rows: list[Row] = []
    for batch in buckets:
        inputs = encoder_inputs(model, batch, seq)
        with torch.inference_mode():
            eager = timer.latency(lambda i=inputs: encode(model, i), "cuda")
        row: Row = {"batch": batch, "seq": seq, "eager_ms": round(eager.p50_ms, 3)}
        try:
            graph, _ = capture(model, inputs)
            replay = timer.latency(graph.replay, "cuda")
            row["graph_ms"] = round(replay.p50_ms, 3)
            row["speed-up"] = round(eager.p50_ms / replay.p50_ms, 1)
        except Exception as exc:  # report, don't abort the run
            row["graph_error"] = f"{type(exc).__name__}: {exc}"[:200]
        rows.append(row)
    return rows


def capture(model: Any, inputs: dict[str, torch.Tensor]) -> tuple[Any, torch.Tensor]:
    """A CUDA graph of `encode` over the static `inputs`, and its output tensor."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.inference_mode(), torch.cuda.stream(stream):
        for _ in range(3):  # warm up on a side stream, as torch.cuda.graphs requires
            encode(model, inputs)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.inference_mode(), torch.cuda.graph(graph):
        output = encode(model, inputs)
    return graph, output
