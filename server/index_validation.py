"""Validation of IndexService requests."""

from __future__ import annotations

from core.catalog.collection_config import validate_collection_name
from core.dense.faiss_index import DenseIndexSpec
from core.errors import FieldViolation, InvalidArgument
from core.ingest.chunking_spec import ChunkingSpec, chunking_violations
from groundwire.v1 import index_service_pb2 as ix
from server.enum_maps import CHUNKER_KINDS, enum_violation

MAX_DELETE_IDS = 10_000
_KINDS = {
    ix.DENSE_INDEX_KIND_UNSPECIFIED: "auto",
    ix.DENSE_INDEX_KIND_FLAT: "flat",
    ix.DENSE_INDEX_KIND_HNSW: "hnsw",
    ix.DENSE_INDEX_KIND_IVF_FLAT: "ivf_flat",
    ix.DENSE_INDEX_KIND_AUTO: "auto",
}
_RANGES = {
    "hnsw_m": (4, 128),
    "hnsw_ef_construction": (8, 1024),
    "hnsw_ef_search": (8, 4096),
    "ivf_nlist": (1, 65536),
    "ivf_nprobe": (1, 65536),
}


def raise_if(violations: list[FieldViolation]) -> None:
    """Raise one InvalidArgument carrying every violation."""
    if violations:
        raise InvalidArgument(
            "; ".join(f"{v.field}: {v.description}" for v in violations), tuple(violations)
        )


def collection_or_default(name: str, default: str, field: str = "collection") -> str:
    """The named collection (validated) or the default one when empty."""
    return validate_collection_name(name or default, field)


def dense_spec(message: ix.DenseIndexConfig) -> DenseIndexSpec:
    """A DenseIndexSpec from the request, with server defaults for unset parameters."""
    violations: list[FieldViolation] = []
    if message.kind not in _KINDS:
        names = (
            "DENSE_INDEX_KIND_AUTO, DENSE_INDEX_KIND_FLAT, DENSE_INDEX_KIND_HNSW, "
            "DENSE_INDEX_KIND_IVF_FLAT"
        )
        violations.append(
            FieldViolation(
                "dense_index.kind",
                f"unknown DenseIndexKind value {message.kind}; use one of {names}",
            )
        )
    values: dict[str, int] = {}
    for name, (low, high) in _RANGES.items():
        if message.HasField(name):
            value = getattr(message, name)
            if not low <= value <= high:
                violations.append(
                    FieldViolation(f"dense_index.{name}", f"must be between {low} and {high}")
                )
            values[name] = value
    raise_if(violations)
    return DenseIndexSpec(kind=_KINDS[message.kind], **values)


def chunking_spec(message: ix.ChunkingOptions, default: ChunkingSpec) -> ChunkingSpec:
    """The chunking the options ask for; unset kind, size and overlap are taken from `default`.

    Every bad field is reported (`chunking.kind`, `chunking.max_tokens` 32-1024,
    `chunking.overlap_tokens` 0 to max_tokens - 1).
    """
    violations: list[FieldViolation] = []
    unset = message.kind == ix.CHUNKER_KIND_UNSPECIFIED
    kind = default.kind if unset else CHUNKER_KINDS.get(message.kind)
    if kind is None:
        violations.append(
            enum_violation("chunking.kind", message.kind, CHUNKER_KINDS, "ChunkerKind")
        )
    size = message.max_tokens if message.HasField("max_tokens") else default.max_tokens
    overlap = (
        message.overlap_tokens if message.HasField("overlap_tokens") else default.overlap_tokens
    )
    violations.extend(chunking_violations(size, overlap))
    raise_if(violations)
    assert kind is not None
    return ChunkingSpec(kind, size, overlap)


def delete_ids(ids: list[str]) -> list[str]:
    """The ids to delete: 1-10000 of them."""
    if not 1 <= len(ids) <= MAX_DELETE_IDS:
        raise InvalidArgument.field(
            "document_ids", f"send between 1 and {MAX_DELETE_IDS} ids; got {len(ids)}"
        )
    return ids
