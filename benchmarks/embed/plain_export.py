"""The fp32 export unfused, beside the fused graph the `onnx` variant serves since recipe
groundwire-onnx-5: `model.onnx` of the same build (the file every variant comes from), for the
benchmarks that compare the two in one run."""

from __future__ import annotations

from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import TOKENIZER_DIR, VARIANT_FILES
from core.embed.onnx_embedder import OnnxEmbedder
from core.embed.saved_tokenizer import load_tokenizer

PLAIN = "onnx-plain"
UNFUSED_NAME = "{model} [unfused export]"
"""`model_name` of the plain session: its own, so a vector cache keyed by name (CachedEmbedder)
keeps its vectors apart from the fused graph's, whose name is the model's with `(onnx)`."""


def plain_export(built: OnnxEmbedder, model: str, batch_size: int, threads: int) -> OnnxEmbedder:
    """A session on the unfused `model.onnx` of `built`'s build (`built`: that build's fp32
    embedder), with its tokenizer and spec."""
    directory = built.source.parent
    return OnnxEmbedder(
        directory / VARIANT_FILES[ModelRuntime.ONNX],
        load_tokenizer(directory / TOKENIZER_DIR),
        built.spec,
        model_name=UNFUSED_NAME.format(model=model),
        runtime=ModelRuntime.ONNX,
        batch_size=batch_size,
        threads=threads,
    )
