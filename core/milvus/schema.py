"""The two Milvus collections of one groundwire collection and their indexes.

`chunks`: one entity per chunk, keyed by `row_id`: the text, the embedding (`vector`), the BM25
sparse vector Milvus derives from `lexical` (section line + text, as the Tantivy index indexes
it) with its BM25 function, and the chunk's and its document's fields that filters and
`Chunk` need (denormalised, so a chunk is one entity read).
`records`: small keyed entities: one per document (`doc:<id>`), the document's text in parts
(`text:<id>:<n>`) and one per setting (`meta:<key>`). Milvus requires a vector field in every
collection, so `records` carries a 2-d placeholder vector that nothing searches.
"""

from __future__ import annotations

from typing import Any

from core.milvus.options import MilvusIndexKind, MilvusOptions

MAX_VARCHAR = 65_535
"""Milvus' largest VARCHAR, in bytes."""
TEXT_PART_CHARS = 16_000
"""Characters per stored text part: at most 4 UTF-8 bytes each, so a part fits `MAX_VARCHAR`."""
RECORD_VECTOR_DIM = 2
CHUNK_OUTPUT_FIELDS = [
    "row_id",
    "document_id",
    "ordinal",
    "text",
    "section_path",
    "has_code",
    "token_estimate",
    "page",
    "risk_flags",
    "risk_level",
    "source_type",
    "source_path",
    "title",
    "metadata",
]
RECORD_OUTPUT_FIELDS = ["key", "kind", "document_id", "value", "payload"]


def chunks_schema(pymilvus: Any, dimension: int) -> Any:
    """The chunk collection's schema with its BM25 function (`lexical` -> `sparse`)."""
    data_type = pymilvus.DataType
    schema = pymilvus.MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("row_id", data_type.INT64, is_primary=True)
    schema.add_field("document_id", data_type.VARCHAR, max_length=MAX_VARCHAR)
    schema.add_field("content_hash", data_type.VARCHAR, max_length=128)
    schema.add_field("ordinal", data_type.INT64)
    schema.add_field("text", data_type.VARCHAR, max_length=MAX_VARCHAR)
    schema.add_field("lexical", data_type.VARCHAR, max_length=MAX_VARCHAR, enable_analyzer=True)
    schema.add_field("sparse", data_type.SPARSE_FLOAT_VECTOR)
    schema.add_field("vector", data_type.FLOAT_VECTOR, dim=dimension)
    for name in ("section_path", "risk_flags", "metadata", "metadata_numbers"):
        schema.add_field(name, data_type.JSON)
    schema.add_field("metadata_nan_keys", data_type.JSON)
    schema.add_field("has_code", data_type.BOOL)
    for name in ("token_estimate", "page", "risk_level"):
        schema.add_field(name, data_type.INT64)
    schema.add_field("source_type", data_type.VARCHAR, max_length=64)
    schema.add_field("source_path", data_type.VARCHAR, max_length=MAX_VARCHAR)
    schema.add_field("title", data_type.VARCHAR, max_length=MAX_VARCHAR)
    schema.add_field("links", data_type.JSON)
    schema.add_field("anchors", data_type.JSON)
    schema.add_function(
        pymilvus.Function(
            name="lexical_bm25",
            function_type=pymilvus.FunctionType.BM25,
            input_field_names=["lexical"],
            output_field_names=["sparse"],
        )
    )
    return schema


def records_schema(pymilvus: Any) -> Any:
    """The records collection's schema (documents, text parts, settings)."""
    data_type = pymilvus.DataType
    schema = pymilvus.MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("key", data_type.VARCHAR, is_primary=True, max_length=MAX_VARCHAR)
    schema.add_field("kind", data_type.VARCHAR, max_length=16)
    schema.add_field("document_id", data_type.VARCHAR, max_length=MAX_VARCHAR)
    schema.add_field("value", data_type.VARCHAR, max_length=MAX_VARCHAR)
    schema.add_field("payload", data_type.JSON)
    schema.add_field("placeholder", data_type.FLOAT_VECTOR, dim=RECORD_VECTOR_DIM)
    return schema


def dense_index_type(options: MilvusOptions, chunks: int) -> str:
    """The Milvus index type for a collection of `chunks` chunks (AUTO: FLAT, then HNSW)."""
    if options.index is MilvusIndexKind.AUTO:
        return "HNSW" if chunks > options.hnsw_threshold else "FLAT"
    return options.index.value.upper()


def chunks_index_params(client: Any, options: MilvusOptions, chunks: int = 0) -> Any:
    """Index parameters of the chunk collection: the dense index and BM25's sparse index."""
    params = dense_index_params(client, options, chunks)
    params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    return params


def dense_index_params(client: Any, options: MilvusOptions, chunks: int) -> Any:
    """Index parameters of the `vector` field alone (see `dense_index_type`)."""
    params = client.prepare_index_params()
    kind = dense_index_type(options, chunks)
    dense_params: dict[str, Any] = {}
    if kind == "HNSW":
        dense_params = {"M": options.hnsw_m, "efConstruction": options.hnsw_ef_construction}
    elif kind == "GPU_CAGRA":
        dense_params = {"intermediate_graph_degree": 64, "graph_degree": 32}
    params.add_index(field_name="vector", index_type=kind, metric_type="IP", params=dense_params)
    return params


def records_index_params(client: Any) -> Any:
    """Index parameters of the records collection (its placeholder vector must be indexed)."""
    params = client.prepare_index_params()
    params.add_index(field_name="placeholder", index_type="FLAT", metric_type="L2")
    return params


def dense_search_params(options: MilvusOptions, kind: str) -> dict[str, Any]:
    """Search parameters for the dense index type `kind`."""
    if kind == "HNSW":
        return {"metric_type": "IP", "params": {"ef": options.hnsw_ef_search}}
    if kind == "GPU_CAGRA":
        return {"metric_type": "IP", "params": {"itopk_size": 128}}
    return {"metric_type": "IP"}
