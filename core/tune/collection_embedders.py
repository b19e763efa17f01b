"""`CollectionEmbedders`: the embedding model of each collection.

Collections use the server's model unless a tune gave them their own copy (`config.tuned_model`
names it under the collection's `models/`). Tuned models are loaded on first use and kept, one
per model directory; the model's path is its name, so query caches keyed by model identity
(`core.cache.query_embedding_cache.model_identity`) never mix two models' vectors.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from core.catalog.collection import Collection
from core.embed.protocol import Embedder
from core.tune.tuned_model import tuned_model_path

logger = logging.getLogger(__name__)


class CollectionEmbedders:
    """The embedder of each collection for documents (`__call__`) and for queries (`queries`);
    thread-safe.

    `load(path)` builds an embedder from a sentence-transformers directory; `wrap_queries`
    puts something in front of a tuned model for queries (the server's query cache, shared
    with the base model's by model identity). `base_queries` is the base model's query path.
    """

    def __init__(
        self,
        base: Embedder,
        load: Callable[[str], Embedder],
        base_queries: Embedder | None = None,
        wrap_queries: Callable[[Embedder], Embedder] = lambda e: e,
    ) -> None:
        self.base = base
        self._base_queries = base_queries or base
        self._load = load
        self._wrap_queries = wrap_queries
        self._models: dict[str, tuple[Embedder, Embedder]] = {}
        self._lock = threading.Lock()

    def __call__(self, collection: Collection) -> Embedder:
        """The model `collection`'s chunks are embedded with (the base model unless tuned)."""
        loaded = self._tuned(collection)
        return self.base if loaded is None else loaded[0]

    def queries(self, collection: Collection) -> Embedder:
        """The same model's query path (cached when the server caches queries)."""
        loaded = self._tuned(collection)
        return self._base_queries if loaded is None else loaded[1]

    def load(self, path: str) -> Embedder:
        """The model at `path` (loaded once; a tune re-embeds with the instance queries use)."""
        with self._lock:
            loaded = self._models.get(path)
            if loaded is None:
                model = self._load(path)
                loaded = self._models[path] = (model, self._wrap_queries(model))
            return loaded[0]

    def _tuned(self, collection: Collection) -> tuple[Embedder, Embedder] | None:
        model_id = collection.config.tuned_model
        if not model_id:
            return None
        path = str(tuned_model_path(collection.directory, model_id))
        with self._lock:
            loaded = self._models.get(path)
            if loaded is None:
                logger.info("loading the tuned model of collection %s: %s", collection.name, path)
                model = self._load(path)
                loaded = self._models[path] = (model, self._wrap_queries(model))
            return loaded

    def forget(self, collection: Collection, model_id: str) -> None:
        """Release a tuned model the collection no longer uses."""
        with self._lock:
            self._models.pop(str(tuned_model_path(collection.directory, model_id)), None)
