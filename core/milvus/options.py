"""`MilvusOptions`: how to reach Milvus and which dense index to build (a frozen value object)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class MilvusIndexKind(StrEnum):
    """The dense index a new collection gets (`storage.milvus_index`)."""

    AUTO = "auto"
    """FLAT (exact) up to `hnsw_threshold` chunks, HNSW once a collection grows past it."""
    FLAT = "flat"
    HNSW = "hnsw"
    GPU_CAGRA = "gpu_cagra"
    """A GPU graph index; needs a Milvus cluster with GPU query nodes (milvus-lite accepts the
    name but builds nothing GPU-side, see core/milvus/README.md)."""


@dataclass(frozen=True, slots=True)
class MilvusOptions:
    """Connection and index settings of the Milvus backend.

    `uri`: a local path (milvus-lite, in this process) or `http(s)://host:19530`; `token`: the
    Milvus token (`user:password` or an API key), "" for none; `database`: prefix of the
    per-tenant databases (`<database>_<tenant>`, see core/milvus/README.md); `tls_ca_file`: CA
    bundle verifying the server (one-way TLS), "" for none.
    """

    uri: str
    token: str = field(default="", repr=False)
    database: str = "groundwire"
    tls_ca_file: str = ""
    index: MilvusIndexKind = MilvusIndexKind.AUTO
    hnsw_threshold: int = 100_000
    """Chunks above which AUTO switches a collection from FLAT to HNSW."""
    hnsw_m: int = 32
    hnsw_ef_construction: int = 200
    hnsw_ef_search: int = 128
