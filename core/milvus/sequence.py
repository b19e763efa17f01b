"""The change sequence of a Milvus-backed collection, minted by Milvus itself.

Every write (upsert or delete) ends by inserting one entity into the collection's `writes`
collection, whose INT64 primary key Milvus allocates (`auto_id`: unique across every client of
the cluster, taken from its timestamp oracle on a real cluster, a persisted counter in
milvus-lite), and storing that id as the `sequence` setting. Replicas read the setting for
`Collection.version()`, so all of them see one version per corpus state. An id is written as
the sequence once, by the write that drew it, after that write's data: a version is therefore
never published before the data it names and never published again, so a retrieval cached at
a version can only be served while nothing was written after the data it saw (see
core/milvus/README.md, "Versions").
"""

from __future__ import annotations

from typing import Any

from core.milvus.schema import RECORD_VECTOR_DIM


def writes_schema(pymilvus: Any) -> Any:
    """A collection of one auto-id key (and the placeholder vector Milvus requires)."""
    data_type = pymilvus.DataType
    schema = pymilvus.MilvusClient.create_schema(auto_id=True, enable_dynamic_field=False)
    schema.add_field("id", data_type.INT64, is_primary=True, auto_id=True)
    schema.add_field("placeholder", data_type.FLOAT_VECTOR, dim=RECORD_VECTOR_DIM)
    return schema


def mint_sequence(client: Any, writes_collection: str) -> int:
    """A sequence number no other write of any replica ever receives."""
    inserted = client.insert(writes_collection, [{"placeholder": [0.0] * RECORD_VECTOR_DIM}])
    (minted,) = list(inserted["ids"])
    client.delete(writes_collection, ids=[int(minted)])  # only the number is needed
    return int(minted)
