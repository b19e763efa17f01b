"""Every evaluation query embedded once, in batches, and reused by each configuration.

`groundwire eval` scores a dozen or more configurations over the same queries; embedding each
query again for each of them (one model call per query) cost more than the searches. The scores
are unchanged up to float rounding: a query embedded in a padded batch agrees with the same query
embedded alone to ~1e-6 (attention masks keep the padding out of the mean pooling).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from core.embed.protocol import Embedder

BATCH = 64


class PrecomputedQueries:
    """An `Embedder` that answers `embed_queries` for known texts from vectors computed once;
    unknown texts and everything else go to the wrapped embedder."""

    def __init__(self, inner: Embedder, texts: Sequence[str]) -> None:
        self._inner = inner
        self.model_name = inner.model_name
        self.dimension = inner.dimension
        self.max_tokens = inner.max_tokens
        self.device = inner.device
        self.additive_token_counts = inner.additive_token_counts
        unique = list(dict.fromkeys(texts))
        self._rows: dict[str, npt.NDArray[np.float32]] = {}
        for start in range(0, len(unique), BATCH):
            batch = unique[start : start + BATCH]
            for text, row in zip(batch, inner.embed_queries(batch), strict=True):
                self._rows[text] = np.asarray(row, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Delegated."""
        return self._inner.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Known texts from the precomputed rows, others from the wrapped embedder."""
        missing = [t for t in texts if t not in self._rows]
        if missing:
            for text, row in zip(missing, self._inner.embed_queries(missing), strict=True):
                self._rows[text] = np.asarray(row, dtype=np.float32)
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        return np.stack([self._rows[t] for t in texts])

    def count_tokens(self, text: str) -> int:
        """Delegated."""
        return self._inner.count_tokens(text)
