"""Per-collection configuration, persisted in the collection's store."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from core.dense.faiss_index import DenseIndexSpec
from core.errors import InvalidArgument

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def validate_collection_name(name: str, field: str = "collection") -> str:
    """Return `name` if it is a valid collection name, else raise InvalidArgument naming `field`."""
    if not _NAME.fullmatch(name):
        raise InvalidArgument.field(
            field,
            f"{name[:80]!r} is not a valid collection name; use 1-63 characters of a-z, 0-9, "
            "'_' and '-', starting with a letter or digit",
        )
    return name


@dataclass(frozen=True, slots=True)
class CollectionConfig:
    """What a collection was created with; fixed for its lifetime."""

    dense: DenseIndexSpec = DenseIndexSpec()
    chunk_max_tokens: int = 200
    description: str = ""
    embedding_model: str = ""
    embedding_dim: int = 0

    def to_json(self) -> str:
        """Serialise for the store's meta table."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CollectionConfig:
        """Inverse of to_json."""
        raw = json.loads(text)
        dense = DenseIndexSpec(**raw.pop("dense"))
        return cls(dense=dense, **raw)
