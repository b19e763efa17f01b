"""`build_embedder`: the one place that turns a model path and a `ModelRuntime` into an Embedder."""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from core.embed.model_runtime import ModelRuntime
from core.embed.protocol import Embedder

if TYPE_CHECKING:
    from core.embed.onnx_embedder import OnnxEmbedder

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
    torch), for auto-int8 the same with onnx-int8 queries (else onnx); on CUDA both are torch. An
    ONNX variant that fails verification is logged at ERROR with the reason and the next one
    (auto-int8's onnx after onnx-int8, else torch) serves instead; with onnx or onnx-int8 configured,
    a missing onnxruntime raises RuntimeError naming the pip command (auto logs it and serves
    with torch).

    `lazy_documents` (a reader process, which embeds queries only): under auto(-int8) on a CPU, the
    torch model is loaded on its first use instead of now (core.embed.lazy_embedder), token
    counts coming from the ONNX runtime's copy of the model's tokenizer until then.
    """
    if runtime.is_auto and device == "cpu":
        documents = None if lazy_documents else _torch(model_path, device, batch_size, cuda_graphs)
        queries = _auto_queries(model_path, runtime, onnx_cache, batch_size, onnx_threads)
        if queries is None:
            return documents or _torch(model_path, device, batch_size, cuda_graphs)
        from core.embed.split_runtime_embedder import SplitRuntimeEmbedder

        if documents is None:
            from core.embed.lazy_embedder import LazyEmbedder

            logger.info(
                "model.runtime %s: queries by %s, documents by torch (loaded on use)",
                runtime.value,
                queries.runtime.value,
            )
            load = functools.partial(_torch, model_path, device, batch_size, cuda_graphs)
            return SplitRuntimeEmbedder(queries, LazyEmbedder(load, queries, model_path))
        logger.info(
            "model.runtime %s: queries by %s, documents by torch",
            runtime.value,
            queries.runtime.value,
        )
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


def _auto_queries(
    model_path: str,
    runtime: ModelRuntime,
    onnx_cache: Path | None,
    batch_size: int,
    threads: int,
) -> OnnxEmbedder | None:
    """The first of `runtime.query_runtimes` that builds, verifies and loads (each failure
    logged with the runtime tried next), or None: torch serves queries too."""
    from core.embed.onnx_embedder import import_onnxruntime

    if onnx_cache is None:
        raise ValueError("an ONNX runtime needs onnx_cache, the directory for its files")
    try:
        import_onnxruntime()
    except RuntimeError as missing:
        logger.warning("serving with torch: %s", missing)
        return None
    candidates = runtime.query_runtimes
    for number, candidate in enumerate(candidates):
        instead = candidates[number + 1].value if number + 1 < len(candidates) else "torch"
        embedder = _onnx(
            model_path, candidate, onnx_cache, batch_size, threads, required=False, instead=instead
        )
        if embedder is not None:
            return embedder
    return None


def _onnx(
    model_path: str,
    runtime: ModelRuntime,
    onnx_cache: Path | None,
    batch_size: int,
    threads: int,
    *,
    required: bool,
    instead: str = "torch",
) -> OnnxEmbedder | None:
    """The ONNX embedder, or None (logged, naming `instead`, what serves in its place) when it
    is refused or fails to build or load. Without onnxruntime: RuntimeError naming the pip
    command when `required`, else None."""
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
            "model.runtime %s refused, serving with %s instead: %s", runtime.value, instead, refused
        )
    except Exception:  # a failed export or an unwritable cache must not stop the server
        logger.exception(
            "model.runtime %s could not be built or loaded under %s; serving with %s instead",
            runtime.value,
            onnx_cache,
            instead,
        )
    return None
