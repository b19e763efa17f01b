"""`ModelRuntime`: what computes the embedding model's forward pass on the host."""

from __future__ import annotations

from enum import Enum


class ModelRuntime(str, Enum):
    """`auto` (the default): on a CPU, queries and documents by `onnx` (documents in a session of
    every core's threads, queries in one of each server process's share; the same vectors as
    torch to float noise, recorded under torch's model name), `torch` when the export is refused
    or onnxruntime is missing; on CUDA, `torch`. `auto-int8` (opt-in): the same with `onnx-int8`
    queries (about 0.8x fp32's CPU per query; retrieval within 0.005
    MRR@10 of fp32 queries one at a time and in batches of 8, but not in batches of 4 on
    python-faq: benchmarks/results/int8_queries.md), falling back to `onnx` queries, then torch.
    `torch`: sentence-transformers (any device). `onnx`: an fp32 ONNX export run by onnxruntime
    on the CPU. `onnx-int8`: the same export with int8 dynamically quantised weights (the
    feed-forward output and attention output projections stay fp32; see core.embed.onnx_export).
    The three explicit runtimes compute queries and documents.
    """

    AUTO = "auto"
    AUTO_INT8 = "auto-int8"
    TORCH = "torch"
    ONNX = "onnx"
    ONNX_INT8 = "onnx-int8"

    @property
    def is_onnx(self) -> bool:
        """True for the onnxruntime variants (not for `auto`, which may serve without them)."""
        return self in (ModelRuntime.ONNX, ModelRuntime.ONNX_INT8)

    @property
    def is_auto(self) -> bool:
        """True for the split runtimes (`auto`, `auto-int8`)."""
        return self in (ModelRuntime.AUTO, ModelRuntime.AUTO_INT8)

    @property
    def query_runtimes(self) -> tuple[ModelRuntime, ...]:
        """What an auto runtime tries for queries on a CPU, in order (torch after them all)."""
        if self is ModelRuntime.AUTO:
            return (ModelRuntime.ONNX,)
        if self is ModelRuntime.AUTO_INT8:
            return (ModelRuntime.ONNX_INT8, ModelRuntime.ONNX)
        return ()


ONNXRUNTIME_INSTALL = (
    'pip install "groundwire[onnx]" (or: pip install onnx==1.23.2 onnxruntime==1.31.1)'
)
"""The command that installs what the ONNX runtimes need."""
