"""Milvus names for groundwire tenants and collections: injective, within Milvus' alphabet.

Milvus names allow letters, digits and "_" and must not start with a digit. Groundwire names are
1-63 characters of a-z, 0-9, "_" and "-" (`validate_collection_name`), so "_" is written "_u"
and "-" "_d": two different groundwire names never map to one Milvus name, which is what keeps
tenants (one database each) and collections apart.
"""

from __future__ import annotations

CHUNKS_SUFFIX = "__chunks"
RECORDS_SUFFIX = "__records"
_PREFIX = "gw_"


def encode_name(name: str) -> str:
    """`name` in Milvus' alphabet, injectively ("_" -> "_u", "-" -> "_d")."""
    return name.replace("_", "_u").replace("-", "_d")


def decode_name(encoded: str) -> str:
    """Inverse of `encode_name`."""
    out: list[str] = []
    chars = iter(encoded)
    for ch in chars:
        if ch == "_":
            out.append("_" if next(chars, "") == "u" else "-")
        else:
            out.append(ch)
    return "".join(out)


def database_name(prefix: str, tenant: str) -> str:
    """The database holding every collection of `tenant`."""
    return f"{prefix}_{encode_name(tenant)}"


def tenant_of(prefix: str, database: str) -> str | None:
    """The tenant a database belongs to, or None when it is not one of ours."""
    head = f"{prefix}_"
    return decode_name(database[len(head) :]) if database.startswith(head) else None


def chunks_collection(name: str) -> str:
    """The Milvus collection of a groundwire collection's chunks (vectors, BM25, metadata)."""
    return f"{_PREFIX}{encode_name(name)}{CHUNKS_SUFFIX}"


def records_collection(name: str) -> str:
    """The Milvus collection of its documents, document text parts and settings."""
    return f"{_PREFIX}{encode_name(name)}{RECORDS_SUFFIX}"


def collection_of(milvus_name: str) -> str | None:
    """The groundwire collection a records collection belongs to, or None."""
    if milvus_name.startswith(_PREFIX) and milvus_name.endswith(RECORDS_SUFFIX):
        return decode_name(milvus_name[len(_PREFIX) : -len(RECORDS_SUFFIX)])
    return None


WRITES_SUFFIX = "__writes"


def writes_collection(name: str) -> str:
    """The Milvus collection whose auto ids are the collection's sequence numbers."""
    return f"{_PREFIX}{encode_name(name)}{WRITES_SUFFIX}"


MEMORIES_SUFFIX = "__memories"


def memories_collection(name: str) -> str:
    """The Milvus collection of a groundwire collection's long-term memories."""
    return f"{_PREFIX}{encode_name(name)}{MEMORIES_SUFFIX}"
