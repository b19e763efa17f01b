"""`ModelRuntime`: what computes the embedding model's forward pass on the host."""

from __future__ import annotations

from enum import Enum


class ModelRuntime(str, Enum):
    """`auto` (the default): on a CPU, queries by `onnx` and documents by `torch` (each the faster
    for its inputs, same vectors to float noise); on CUDA, `torch`. `torch`: sentence-transformers
    (any device). `onnx`: an fp32 ONNX export run by onnxruntime on the CPU. `onnx-int8`: the
    same export with int8 dynamically quantised weights (the feed-forward output projections stay
    fp32; see core.embed.onnx_build). The three explicit runtimes compute queries and documents.
    """

    AUTO = "auto"
    TORCH = "torch"
    ONNX = "onnx"
    ONNX_INT8 = "onnx-int8"

    @property
    def is_onnx(self) -> bool:
        """True for the onnxruntime variants (not for `auto`, which may serve without them)."""
        return self in (ModelRuntime.ONNX, ModelRuntime.ONNX_INT8)


ONNXRUNTIME_INSTALL = (
    'pip install "groundwire[onnx]" (or: pip install onnx==1.23.2 onnxruntime==1.31.1)'
)
"""The command that installs what the ONNX runtimes need."""
