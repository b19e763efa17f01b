"""Long-term memories through a Collection, on every storage backend: the backend supplies the
memory store, an add changes the collection version (so no cached retrieval outlives it), and
the memories outlive the process that added them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.catalog.storage_backend import StorageBackend
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.memory.records import MemoryDraft
from core.retrieve.keywords import extract_keywords

QUERY = "which port does the server use behind a proxy"
MEMORIES = [
    MemoryDraft("The user runs the server on port 7000 behind a proxy.", importance=1.0),
    MemoryDraft("The user prefers short answers.", metadata={"kind": 'pre"f\\'}),
]


def _search(catalog: CollectionCatalog, embedder: SentenceTransformerEmbedder) -> list[str]:
    collection = catalog.get(DEFAULT_TENANT, "mem")
    query = embedder.embed_queries([QUERY])[0]
    found = collection.memories().search(query, frozenset(extract_keywords(QUERY)), 0, 5)
    return [scored.memory.memory_id for scored in found]


def test_memories_change_the_version_and_outlive_their_process(
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
    storage_backend: Callable[[], StorageBackend],
) -> None:
    catalog = CollectionCatalog(tmp_path, backend=storage_backend())
    catalog.open_all()
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    collection = catalog.create(DEFAULT_TENANT, "mem", config)
    empty = collection.version()
    assert collection.memory_count() == 0 and _search(catalog, embedder) == []
    vectors = embedder.embed_documents([m.text for m in MEMORIES])
    ids = collection.memories().add(MEMORIES, vectors, now_ms=0)
    assert len(set(ids)) == 2 and all(i.startswith("memory-") for i in ids)
    after = collection.version()
    assert after != empty and empty.is_older_than(after)
    assert collection.memory_count() == 2
    assert _search(catalog, embedder) == ids  # the port memory first
    with pytest.raises(ValueError, match="dimension"):
        collection.memories().add(MEMORIES[:1], np.ones((1, 3), dtype=np.float32))
    assert collection.version() == after  # a refused add changes nothing
    catalog.close()

    reopened = CollectionCatalog(tmp_path, backend=storage_backend())
    reopened.open_all()
    again = reopened.get(DEFAULT_TENANT, "mem")
    assert again.memory_count() == 2 and again.version() == after
    assert _search(reopened, embedder) == ids
    stored = again.memories().search(embedder.embed_queries([QUERY])[0], frozenset(), 0, 5)
    assert {s.memory.memory_id: dict(s.memory.metadata) for s in stored}[ids[1]] == {
        "kind": 'pre"f\\'
    }
    reopened.close()
