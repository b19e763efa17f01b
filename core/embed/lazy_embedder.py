"""`LazyEmbedder`: an embedder whose model is loaded on first use, described until then by a twin.

A reader process (server.processes > 1) embeds queries only, by onnxruntime under the default
`model.runtime = auto`; the passage model (a second onnxruntime session with every core's
threads, or torch when the export is refused) is needed only when the reader embeds a passage
(the extractive generator's `all` scoring). Loading it at start-up costs each reader the model's
weights again (benchmarks/results/memory_sizing.md). This wrapper defers the load to the first
`embed_documents` / `embed_queries` call. Its identity (dimension, token limits, device,
additivity) and token counts come from a twin: another session or runtime of the same model,
with the same tokenizer files (the query session), so nothing a caller sees differs before or
after the load. `model_name` is given (the name the split embedder records for a collection).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from core.embed.embedder_identity import EmbedderIdentity
from core.embed.protocol import Embedder

logger = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float32]


class LazyEmbedder(EmbedderIdentity):
    """`load()` builds the real embedder once, on the first embedding call; thread-safe."""

    def __init__(self, load: Callable[[], Embedder], twin: Embedder, model_name: str) -> None:
        self._load = load
        self._twin = twin
        self._loaded: Embedder | None = None
        self._lock = threading.Lock()
        self._take_identity(twin, model_name)

    @property
    def loaded(self) -> bool:
        """Whether the real embedder has been loaded."""
        return self._loaded is not None

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        """Passages through the real embedder (loaded now if needed)."""
        return self._model().embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        """Queries through the real embedder (loaded now if needed)."""
        return self._model().embed_queries(texts)

    def count_tokens(self, text: str) -> int:
        """Token count from the twin's tokenizer (the model's own), without loading."""
        return self._twin.count_tokens(text)

    def _model(self) -> Embedder:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                logger.info("loading %s on its first use", self.model_name)
                model = self._load()
                mine = (self.dimension, self.max_tokens, self.device, self.additive_token_counts)
                theirs = (
                    model.dimension,
                    model.max_tokens,
                    model.device,
                    model.additive_token_counts,
                )
                if mine != theirs:
                    raise RuntimeError(
                        f"{model.model_name} loaded as (dimension, max_tokens, device, additive)"
                        f" {theirs}, but {self.model_name} was described as {mine}"
                    )
                self._loaded = model
            return self._loaded


def without_loading(embedder: Embedder) -> Embedder:
    """What computes `embedder`'s document vectors for a comparison (the model check) without
    loading a lazy model: a split embedder's query runtime (the same model, verified against
    torch at build time) while its document half is a LazyEmbedder not loaded yet; otherwise
    `embedder` itself."""
    from core.embed.split_runtime_embedder import SplitRuntimeEmbedder

    if (
        isinstance(embedder, SplitRuntimeEmbedder)
        and isinstance(embedder.documents, LazyEmbedder)
        and not embedder.documents.loaded
    ):
        return embedder.queries
    return embedder
