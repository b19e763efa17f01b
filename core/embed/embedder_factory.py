"""`build_embedder`: the one place that turns a model path and a `ModelRuntime` into an Embedder."""

from __future__ import annotations

import logging
from pathlib import Path

from core.embed.model_runtime import ModelRuntime
from core.embed.protocol import Embedder

logger = logging.getLogger(__name__)


def build_embedder(
    model_path: str,
    runtime: ModelRuntime,
    *,
    device: str = "cpu",
    batch_size: int = 32,
    cuda_graphs: bool = True,
    onnx_cache: Path | None = None,
    onnx_threads: int = 0,
) -> Embedder:
    """The embedder for `runtime`: sentence-transformers on `device` for torch; for onnx and
    onnx-int8 an `OnnxEmbedder` on the CPU, built and verified once under `onnx_cache` (see
    core.embed.onnx_build). A variant that fails verification is logged at ERROR with the reason
    and torch serves instead; a missing onnxruntime raises RuntimeError naming the pip command.
    """
    if runtime.is_onnx:
        from core.embed.onnx_build import OnnxRefused, load_onnx_embedder

        if onnx_cache is None:
            raise ValueError("an ONNX runtime needs onnx_cache, the directory for its files")
        if device != "cpu":
            logger.warning("model.runtime %s runs on the CPU, not on %s", runtime.value, device)
        try:
            return load_onnx_embedder(
                Path(model_path),
                onnx_cache,
                runtime,
                batch_size=batch_size,
                threads=onnx_threads,
            )
        except OnnxRefused as refused:
            logger.error(
                "model.runtime %s refused, serving with torch instead: %s", runtime.value, refused
            )
    from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(model_path, device, batch_size, cuda_graphs=cuda_graphs)
    embedder.warm_up_query_graphs()
    logger.info("query embedding: %s", embedder.query_graphs)
    return embedder
