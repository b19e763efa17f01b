"""`build_embedder`: the one place that turns a model path and a `ModelRuntime` into an Embedder."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core.embed.model_runtime import ModelRuntime
from core.embed.protocol import Embedder
from core.embed.split_runtime_embedder import SplitRuntimeEmbedder

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
    document_threads: int = 0,
    lazy_documents: bool = False,
) -> Embedder:
    """The embedder for `runtime`: sentence-transformers on `device` for torch; for onnx and
    onnx-int8 an `OnnxEmbedder` on the CPU, built and verified once under `onnx_cache` (see
    core.embed.onnx_build); for auto (and auto-int8) on a CPU a `SplitRuntimeEmbedder` of the
    per-token int8 export for queries (else the fp32 export) and the fp32 export for documents
    (auto-fp32: fp32 for both) under the source model's name; on CUDA both are torch. An ONNX
    variant that fails verification is logged at ERROR with the reason and the next one (onnx
    after onnx-int8 for auto's queries, else torch) serves instead;
    with onnx or onnx-int8 configured, a missing onnxruntime raises RuntimeError naming the pip
    command (auto logs it and serves with torch).

    `onnx_threads`: the query session's intra-op threads (0: onnxruntime's choice).
    `document_threads`: the passage session's (0: the query session's; another value gets a
    session of its own, so ingest can use every core while each server process's queries use
    their share). `lazy_documents` (a reader process, which embeds queries only): the passage
    half is loaded on its first use instead of now (core.embed.lazy_embedder), identity and
    token counts coming from the query session's copy of the model's tokenizer until then.
    """
    if runtime.is_auto and device == "cpu":
        queries = _auto_queries(model_path, runtime, onnx_cache, batch_size, onnx_threads)
        if queries is None:
            return _torch(model_path, device, batch_size, cuda_graphs)
        load = functools.partial(
            _auto_documents,
            model_path,
            queries,
            onnx_cache,
            batch_size,
            document_threads,
            cuda_graphs,
        )
        documents = _document_half(load, queries, model_path, lazy_documents)
        logger.info(
            "model.runtime %s: queries by %s (%d thread(s)), passages %s",
            runtime.value,
            queries.runtime.value,
            queries.threads,
            "loaded on first use" if lazy_documents else "loaded",
        )
        return SplitRuntimeEmbedder(queries, documents, model_name=model_path)
    if runtime.is_onnx:
        if device != "cpu":
            logger.warning("model.runtime %s runs on the CPU, not on %s", runtime.value, device)
        embedder = _onnx(model_path, runtime, onnx_cache, batch_size, onnx_threads, required=True)
        if embedder is not None:
            if not document_threads or document_threads == embedder.threads:
                return embedder
            passages = functools.partial(
                _onnx, model_path, runtime, onnx_cache, batch_size, document_threads, required=True
            )
            documents = _document_half(passages, embedder, embedder.model_name, lazy_documents)
            return SplitRuntimeEmbedder(embedder, documents)
    return _torch(model_path, device, batch_size, cuda_graphs)


def _document_half(
    load: Callable[[], Embedder | None], queries: Embedder, model_name: str, lazy: bool
) -> Embedder:
    """The embedder for passages: `load()` now, or (`lazy`, a reader process) on first use,
    described until then by `queries` (the same model and tokenizer files)."""
    if lazy:
        from core.embed.lazy_embedder import LazyEmbedder

        return LazyEmbedder(lambda: _loaded(load), queries, model_name)
    return _loaded(load)


def _loaded(load: Callable[[], Embedder | None]) -> Embedder:
    embedder = load()
    if embedder is None:
        raise RuntimeError("the document model could not be loaded (see the log above)")
    return embedder


def _auto_documents(
    model_path: str,
    queries: OnnxEmbedder,
    onnx_cache: Path | None,
    batch_size: int,
    threads: int,
    cuda_graphs: bool,
) -> Embedder:
    """auto's document runtime on a CPU: the fp32 export (the same vectors as torch to float
    noise, faster on real chunk batches: benchmarks/results/passage_runtimes.md), in a session of
    its own when `threads` (ingest is throughput work, given every core) differs from the query
    session's; torch when the fp32 export is refused or fails to load."""
    threads = threads or queries.threads
    if queries.runtime is ModelRuntime.ONNX and threads == queries.threads:
        logger.info("passages by the query session (onnx, %d thread(s))", threads)
        return queries
    logger.info("passages by onnx in a session of %d thread(s)", threads)
    documents = _onnx(
        model_path, ModelRuntime.ONNX, onnx_cache, batch_size, threads, required=False
    )
    return (
        documents if documents is not None else _torch(model_path, "cpu", batch_size, cuda_graphs)
    )


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
