"""`SplitRuntimeEmbedder`: one model, queries computed by one runtime or session and documents
by another.

The server's query path is latency- and GIL-critical and each server process gets its share of
the cores for it; ingestion is throughput-bound and gets all of them. Under `model.runtime =
auto` on a CPU the query half is the per-token int8 export and the document half the fp32 export
(cosine 1.00000 to torch, verified at build time); under auto-fp32 both halves run the fp32
export, in two onnxruntime sessions when their thread counts differ; without a usable export both
are torch (core.embed.embedder_factory).

Identity: `model_name` is the document runtime's unless given (auto gives the source model's,
the name torch reports), so a collection records the same model name whichever runtime indexed
it or serves its queries (and the model check compares vectors, not names).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from core.embed.embedder_identity import EmbedderIdentity
from core.embed.protocol import Embedder

FloatArray = npt.NDArray[np.float32]


class SplitRuntimeEmbedder(EmbedderIdentity):
    """`embed_queries` by `queries`, everything else (documents, token counts) by `documents`;
    thread-safe when both are. Both must be the same model (same dimension and tokenizer)."""

    def __init__(
        self, queries: Embedder, documents: Embedder, *, model_name: str | None = None
    ) -> None:
        if queries.dimension != documents.dimension:
            raise ValueError(
                f"query and document runtimes disagree on the dimension: {queries.dimension} "
                f"({queries.model_name}) vs {documents.dimension} ({documents.model_name})"
            )
        self.queries = queries
        self.documents = documents
        self._take_identity(documents, model_name)

    @property
    def query_model_name(self) -> str:
        """The query runtime's name (`<model> (onnx)`), for logs and stats."""
        return self.queries.model_name

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        """Passages through the document runtime."""
        return self.documents.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        """Queries through the query runtime."""
        return self.queries.embed_queries(texts)

    def count_tokens(self, text: str) -> int:
        """Token count from the document runtime's tokenizer (the model's own, as the other's)."""
        return self.documents.count_tokens(text)
