"""`build_embedder`: the one place that turns a model path and a `ModelRuntime` into an Embedder."""

from __future__ import annotations

import functools
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
    lazy_documents: bool = False,
) -> Embedder:
    """The embedder for `runtime`: sentence-transformers on `device` for torch; for onnx and
    onnx-int8 an `OnnxEmbedder` on the CPU, built and verified once under `onnx_cache` (see
    core.embed.onnx_build); for auto on a CPU a `SplitRuntimeEmbedder` (queries onnx, documents
    torch), on CUDA torch. An ONNX variant that fails verification is logged at ERROR with the
    reason and torch serves instead; with onnx or onnx-int8 configured, a missing onnxruntime
    raises RuntimeError naming the pip command (auto logs it and serves with torch).

    `lazy_documents` (a reader process, which embeds queries only): under auto on a CPU, the
    torch model is loaded on its first use instead of now (core.embed.lazy_embedder), token
    counts coming from the ONNX runtime's copy of the model's tokenizer until then.
    """
    if runtime is ModelRuntime.AUTO and device == "cpu":
        documents = None if lazy_documents else _torch(model_path, device, batch_size, cuda_graphs)
        queries = _onnx(
            model_path, ModelRuntime.ONNX, onnx_cache, batch_size, onnx_threads, required=False
        )
        if queries is None:
            return documents or _torch(model_path, device, batch_size, cuda_graphs)
        from core.embed.split_runtime_embedder import SplitRuntimeEmbedder

        if documents is None:
            from core.embed.lazy_embedder import LazyEmbedder

            logger.info("model.runtime auto: queries by onnx, documents by torch (loaded on use)")
            load = functools.partial(_torch, model_path, device, batch_size, cuda_graphs)
            return SplitRuntimeEmbedder(queries, LazyEmbedder(load, queries, model_path))
        logger.info("model.runtime auto: queries by onnx, documents by torch")
        return SplitRuntimeEmbedder(queries, documents)
    if runtime.is_onnx:
        if device != "cpu":
            logger.warning("model.runtime %s runs on the CPU, not on %s", runtime.value, device)
        embedder = _onnx(model_path, runtime, onnx_cache, batch_size, onnx_threads, required=True)
        if embedder is not None:
            return embedder
    return _torch(model_path, device, batch_size, cuda_graphs)


def _torch(model_path: str, device: str, batch_size: int, cuda_graphs: bool) -> Embedder:
    from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(model_path, device, batch_size, cuda_graphs=cuda_graphs)
    embedder.warm_up_query_graphs()
    logger.info("query embedding: %s", embedder.query_graphs)
    return embedder


def _onnx(
    model_path: str,
    runtime: ModelRuntime,
    onnx_cache: Path | None,
    batch_size: int,
    threads: int,
    *,
    required: bool,
) -> Embedder | None:
    """The ONNX embedder, or None (logged) when it is refused or fails to build or load.
    Without onnxruntime: RuntimeError naming the pip command when `required`, else None."""
    from core.embed.onnx_build import OnnxRefused, load_onnx_embedder
    from core.embed.onnx_embedder import import_onnxruntime

    if onnx_cache is None:
        raise ValueError("an ONNX runtime needs onnx_cache, the directory for its files")
    try:
        import_onnxruntime()
    except RuntimeError as missing:
        if required:
            raise
        logger.warning("serving with torch: %s", missing)
        return None
    try:
        return load_onnx_embedder(
            Path(model_path), onnx_cache, runtime, batch_size=batch_size, threads=threads
        )
    except OnnxRefused as refused:
        logger.error(
            "model.runtime %s refused, serving with torch instead: %s", runtime.value, refused
        )
    except Exception:  # a failed export or an unwritable cache must not stop the server
        logger.exception(
            "model.runtime %s could not be built or loaded under %s; serving with torch instead",
            runtime.value,
            onnx_cache,
        )
    return None
