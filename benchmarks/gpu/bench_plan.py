"""Sizes the GPU benchmark runs at: the full plan (GPU machine) and the smoke plan (tiny, CPU)."""

from __future__ import annotations

from dataclasses import dataclass

from bench_timing import Timer

MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class Plan:
    """Every size and repeat count of one benchmark run."""

    name: str
    repeats: int  # timed calls per measurement (fewer once `budget_s` runs out)
    warmup: int  # untimed calls before each measurement
    budget_s: float  # seconds one measurement may take (at least 3 timed calls)
    copy_bytes: int  # buffer size for the copy-bandwidth test
    matmul_size: int  # square matmul side for the matmul-rate test
    corpus_rows: tuple[int, ...]  # raw matmul + top-k corpus sizes (x 384)
    top_k_batches: tuple[int, ...]  # query batches for raw and engine search
    forward_batches: tuple[int, ...]  # encoder forward batch sizes (seq 32)
    graph_buckets: tuple[int, ...]  # CUDA-graph batch buckets (seq 32)
    callers: tuple[int, ...]  # concurrent callers of the micro-batched embedder
    duration_s: float  # seconds per concurrent-load measurement
    engine_rows: int  # vectors in the dense engine under test
    corpus_docs: int  # python-faq sections upserted into the benchmark's collection
    concurrency: tuple[int, ...]  # Retrieve calls in flight
    client_processes: int  # processes the gRPC clients are spread over
    server_threads: int  # server.worker_threads

    @property
    def timer(self) -> Timer:
        """The timing settings of this plan."""
        return Timer(self.repeats, self.warmup, self.budget_s)

    @classmethod
    def full(cls, device: str) -> Plan:
        """The sizes the issue asks for (meant for a GPU; slow on CPU)."""
        return cls(
            name="full",
            repeats=50,
            warmup=3,
            budget_s=20.0,
            copy_bytes=1024 * MIB,
            matmul_size=8192 if device.startswith("cuda") else 2048,
            corpus_rows=(1_000_000, 10_000_000),
            top_k_batches=(1, 16, 128, 1024),
            forward_batches=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
            graph_buckets=(1, 8, 64),
            callers=(1, 16, 64, 256),
            duration_s=5.0,
            engine_rows=1_000_000,
            corpus_docs=5093,
            concurrency=(1, 16, 64, 256),
            client_processes=4,
            server_threads=16,
        )

    @classmethod
    def smoke(cls) -> Plan:
        """Tiny sizes: checks every section runs end to end, numbers mean little."""
        return cls(
            name="smoke",
            repeats=5,
            warmup=1,
            budget_s=1.0,
            copy_bytes=16 * MIB,
            matmul_size=512,
            corpus_rows=(20_000,),
            top_k_batches=(1, 16, 128),
            forward_batches=(1, 16),
            graph_buckets=(1, 8),
            callers=(1, 8),
            duration_s=1.5,
            engine_rows=20_000,
            corpus_docs=12,
            concurrency=(1, 8),
            client_processes=1,
            server_threads=4,
        )
