"""`SplitRuntimeEmbedder`: one model, queries computed by one runtime and documents by another.

The runtimes of one model agree to float noise (onnx fp32 vs torch: cosine 1.00000, verified at
build time), but not at the same speed for every input: onnxruntime is faster for short query
batches and releases the GIL for the whole forward pass, torch is faster for long passage batches
on this CPU (benchmarks/results/embed_runtimes.md). The server's query path is the latency- and
GIL-critical one; ingestion is throughput-bound. This embedder lets each use its faster runtime.

Identity: `model_name` is the document runtime's, so a collection records the same model name
whichever runtime serves its queries (and the model check compares vectors, not names).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from core.embed.protocol import Embedder

FloatArray = npt.NDArray[np.float32]


class SplitRuntimeEmbedder:
    """`embed_queries` by `queries`, everything else (documents, token counts) by `documents`;
    thread-safe when both are. Both must be the same model (same dimension and tokenizer)."""

    def __init__(self, queries: Embedder, documents: Embedder) -> None:
        if queries.dimension != documents.dimension:
            raise ValueError(
                f"query and document runtimes disagree on the dimension: {queries.dimension} "
                f"({queries.model_name}) vs {documents.dimension} ({documents.model_name})"
            )
        self.queries = queries
        self.documents = documents
        self.model_name = documents.model_name
        self.dimension = documents.dimension
        self.max_tokens = documents.max_tokens
        self.device = documents.device
        self.additive_token_counts = documents.additive_token_counts

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
