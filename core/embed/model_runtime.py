"""`ModelRuntime`: what computes the embedding model's forward pass on the host."""

from __future__ import annotations

from enum import Enum


class ModelRuntime(str, Enum):
    """`auto` (the default): on a CPU, queries by `onnx-int8` (the export with every weight
    MatMul per-token int8: about half fp32's CPU per query with VNNI and 0.7x without, a
    question's vector the same in any batch, retrieval within 0.005 MRR@10 of fp32 queries on
    every labelled set, its weights signed or unsigned as the CPU multiplies them exactly:
    core.embed.int8_weights, benchmarks/results/int8_queries.md), falling back to `onnx` queries, then torch; documents by
    the fp32 `onnx` export in a session with a thread per available core (the same vectors as
    torch to float noise), recorded under torch's model name; torch when the export is refused or
    onnxruntime is missing; on CUDA, `torch`. `auto-fp32`: the same with fp32 `onnx` queries (the
    default before per-token int8). `auto-int8`: what `auto` is now (its default before, kept so
    configurations that name it keep working). `torch`: sentence-transformers (any device).
    `onnx`: an fp32 ONNX export run by onnxruntime on the CPU. `onnx-int8`: the same export with
    per-token int8 weight MatMuls (core.embed.per_token_int8). The three explicit runtimes
    compute queries and documents.
    """

    AUTO = "auto"
    AUTO_FP32 = "auto-fp32"
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
        """True for the split runtimes (`auto`, `auto-fp32`, `auto-int8`)."""
        return self in (ModelRuntime.AUTO, ModelRuntime.AUTO_FP32, ModelRuntime.AUTO_INT8)

    @property
    def query_runtimes(self) -> tuple[ModelRuntime, ...]:
        """What an auto runtime tries for queries on a CPU, in order (torch after them all)."""
        if self is ModelRuntime.AUTO_FP32:
            return (ModelRuntime.ONNX,)
        if self.is_auto:
            return (ModelRuntime.ONNX_INT8, ModelRuntime.ONNX)
        return ()


ONNXRUNTIME_INSTALL = (
    'pip install "groundwire[onnx]" (or: pip install onnx==1.23.2 onnxruntime==1.31.1)'
)
"""The command that installs what the ONNX runtimes need."""
