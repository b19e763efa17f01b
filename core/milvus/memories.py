"""`MilvusMemoryStore`: a collection's long-term memories in Milvus, shared by every replica.

One Milvus collection per groundwire collection (`gw_<name>__memories`, in the tenant's
database): an auto-id number (the public id is "memory-<number>", unique across replicas), the
text, importance, timestamp, metadata and the unit vector. Memories are only ever added, so the
count names the set: a search scores them exactly (the same `MemoryIndex` as the local store)
from a copy reloaded whenever the count in Milvus differs from the copy's. Every add publishes a
new collection sequence (`MilvusStore.publish_write`) after its memories are stored, so the
collection version changes on every replica and no cached retrieval outlives it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from core.memory.index import MemoryIndex
from core.memory.records import Memory, MemoryDraft, ScoredMemory, memory_id_for
from core.memory.scoring import DEFAULT_DECAY_RATE_PER_HOUR
from core.memory.store import _normalised
from core.memory.validation import validate_memories
from core.milvus.queries import query_all
from core.milvus.schema import MAX_VARCHAR
from core.milvus.store import MilvusStore

_FIELDS = ["number", "text", "importance", "timestamp_ms", "metadata", "vector"]


def memories_schema(pymilvus: Any, dimension: int) -> Any:
    """The memories collection: auto-id `number`, the scoring fields and the unit vector."""
    data_type = pymilvus.DataType
    schema = pymilvus.MilvusClient.create_schema(auto_id=True, enable_dynamic_field=False)
    schema.add_field("number", data_type.INT64, is_primary=True, auto_id=True)
    schema.add_field("text", data_type.VARCHAR, max_length=MAX_VARCHAR)
    schema.add_field("importance", data_type.DOUBLE)
    schema.add_field("timestamp_ms", data_type.INT64)
    schema.add_field("metadata", data_type.JSON)
    schema.add_field("vector", data_type.FLOAT_VECTOR, dim=dimension)
    return schema


class MilvusMemoryStore:
    """The `Memories` protocol over one Milvus collection (thread-safe)."""

    def __init__(self, store: MilvusStore, pymilvus: Any, dimension: int) -> None:
        self._store = store
        self._client = store.client
        self._pymilvus = pymilvus
        self._dimension = dimension
        self._name = store.memories
        self._lock = threading.Lock()
        self._index = MemoryIndex()
        self._exists = False

    def count(self) -> int:
        """Memories stored (by any replica)."""
        if not self._present():
            return 0
        found = self._client.query(self._name, filter="", output_fields=["count(*)"])
        return int(found[0]["count(*)"])

    def add(
        self,
        memories: Sequence[MemoryDraft],
        embeddings: npt.NDArray[np.float32],
        now_ms: int | None = None,
    ) -> list[str]:
        """Store `memories`, then publish a new collection sequence; their ids in order."""
        validate_memories(memories, max_per_request=None)
        matrix = _normalised(embeddings, len(memories))
        if matrix.shape[1] != self._dimension:
            raise ValueError(
                f"embeddings have dimension {matrix.shape[1]}, the memories have {self._dimension}"
            )
        stamp = int(time.time() * 1000) if now_ms is None else now_ms
        self._ensure()
        entities = [
            {
                "text": draft.text,
                "importance": float(draft.importance),
                "timestamp_ms": stamp if draft.timestamp_ms is None else draft.timestamp_ms,
                "metadata": dict(draft.metadata),
                "vector": vector.tolist(),
            }
            for draft, vector in zip(memories, matrix, strict=True)
        ]
        inserted = self._client.insert(self._name, entities)
        self._store.publish_write()
        return [memory_id_for(int(n)) for n in inserted["ids"]]

    def search(
        self,
        query_vector: npt.NDArray[np.float32],
        query_keywords: Collection[str],
        now_ms: int,
        k: int,
        decay_rate: float = DEFAULT_DECAY_RATE_PER_HOUR,
        min_relevance: float = 0.0,
    ) -> list[ScoredMemory]:
        """The `k` best memories by score, best first (ties: older memory first)."""
        if k < 1 or not decay_rate >= 0:
            raise ValueError(f"need k >= 1 and decay_rate >= 0, got {k} and {decay_rate}")
        query = _normalised(np.asarray(query_vector).reshape(1, -1), 1)[0]
        if query.shape[0] != self._dimension:
            raise ValueError(
                f"query vector has dimension {query.shape[0]}, memories have {self._dimension}"
            )
        count = self.count()
        with self._lock:
            if len(self._index) != count:
                self._index = self._load()
            return self._index.search(query, query_keywords, now_ms, k, decay_rate, min_relevance)

    def close(self) -> None:
        """Nothing to release: the connection belongs to the backend."""

    def _load(self) -> MemoryIndex:
        found = query_all(self._client, self._name, "", _FIELDS) if self._present() else []
        found.sort(key=lambda entity: int(entity["number"]))
        index = MemoryIndex()
        if found:
            memories = [
                Memory(
                    int(e["number"]),
                    str(e["text"]),
                    float(e["importance"]),
                    int(e["timestamp_ms"]),
                    {str(k): str(v) for k, v in dict(e["metadata"]).items()},
                )
                for e in found
            ]
            vectors = np.asarray([e["vector"] for e in found], dtype=np.float32)
            index.append(memories, vectors)
        return index

    def _present(self) -> bool:
        if not self._exists:
            self._exists = bool(self._client.has_collection(self._name))
        return self._exists

    def _ensure(self) -> None:
        """Create the memories collection on first use (collections made before it existed)."""
        if self._present():
            return
        try:
            self._client.create_collection(
                self._name,
                schema=memories_schema(self._pymilvus, self._dimension),
                index_params=_index_params(self._client),
                consistency_level="Strong",
            )
        except Exception:
            if not self._client.has_collection(self._name):
                raise  # not a race with another replica creating it
        self._client.load_collection(self._name)
        self._exists = True


def _index_params(client: Any) -> Any:
    params = client.prepare_index_params()
    params.add_index(field_name="vector", index_type="FLAT", metric_type="IP")
    return params
