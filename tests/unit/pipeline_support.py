"""A real retrieval pipeline over one freshly indexed collection, for tests above the pipeline."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.catalog.storage_backend import StorageBackend
from core.embed.protocol import Embedder
from core.indexer import Indexer
from core.models import Document
from core.retrieve.pipeline import RetrievalPipeline


@contextmanager
def indexed_pipeline(
    embedder: Embedder,
    data_dir: Path,
    collection: str,
    documents: Sequence[Document],
    backend: StorageBackend | None = None,
    lexical_pool: ThreadPoolExecutor | None = None,
) -> Iterator[RetrievalPipeline]:
    """`documents` indexed into `collection` under `data_dir` (on `backend`, local when None),
    and a pipeline over it (its remote lexical searches on `lexical_pool`, a pool of 2 when
    None)."""
    catalog = CollectionCatalog(data_dir, backend=backend)
    catalog.open_all()
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    Indexer(embedder, 200, 1 << 20).index(
        catalog.create(DEFAULT_TENANT, collection, config), documents
    )
    try:
        with lexical_pool or ThreadPoolExecutor(2) as pool:
            yield RetrievalPipeline(catalog, embedder, pool)
    finally:
        catalog.close()
