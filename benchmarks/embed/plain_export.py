"""The fp32 export unfused, beside the fused graph the `onnx` variant serves since recipe
groundwire-onnx-5: `model.onnx` of the same build (the file every variant comes from), for the
benchmarks that compare the two in one run."""

from __future__ import annotations

from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import VARIANT_FILES, session_on
from core.embed.onnx_embedder import OnnxEmbedder

PLAIN = "onnx-plain"
UNFUSED_NAME = "{model} [unfused export]"
"""`model_name` of the plain session: its own, so a vector cache keyed by name (CachedEmbedder)
keeps its vectors apart from the fused graph's, whose name is the model's with `(onnx)`."""


def plain_export(built: OnnxEmbedder, model: str, batch_size: int, threads: int) -> OnnxEmbedder:
    """A session on the unfused `model.onnx` of `built`'s build (`built`: that build's fp32
    embedder), with its tokenizer and spec."""
    return session_on(
        built.source.parent,
        VARIANT_FILES[ModelRuntime.ONNX],
        ModelRuntime.ONNX,
        model_name=UNFUSED_NAME.format(model=model),
        batch_size=batch_size,
        threads=threads,
    )
