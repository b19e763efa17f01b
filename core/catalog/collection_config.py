"""Per-collection configuration, persisted in the collection's store."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from core.dense.faiss_index import DenseIndexSpec
from core.errors import InvalidArgument
from core.ingest.chunking_spec import DEFAULT_OVERLAP_TOKENS, ChunkerKind, ChunkingSpec

SECTION_LEAD_WEIGHT = 0.0
"""New collections store plain chunk vectors. A weight w > 0 mixes each chunk vector with its
section's lead vector (`core/embed/section_context.py`); w = 2
(`EVALUATED_SECTION_LEAD_WEIGHT`) gained on both development sets' subsets yet lost a paraphrase
the plain vectors find (tests/integration/test_retrieve.py); separately stored section vectors
(`section_vectors`, mixed in at query time) replaced it in `groundwire eval`."""

EVALUATED_SECTION_LEAD_WEIGHT = 2.0
"""The section-lead weight `groundwire eval` compares with the default."""

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
    """What a collection was created with; fixed for its lifetime except `tuned_model`.

    `chunker_kind`, `chunk_max_tokens` and `chunk_overlap_tokens` are the default chunking of
    the collection's documents (see `chunking`). `section_lead_weight` is how much of its
    section's lead each chunk vector carries (`core/embed/section_context.py`).
    `section_vectors`: each section is also embedded whole and stored beside its chunks
    (`core/embed/section_vectors.py`); collections created before that have none.
    """

    dense: DenseIndexSpec = DenseIndexSpec()
    chunk_max_tokens: int = 200
    description: str = ""
    embedding_model: str = ""
    embedding_dim: int = 0
    chunker_kind: ChunkerKind = ChunkerKind.STRUCTURE
    chunk_overlap_tokens: int = DEFAULT_OVERLAP_TOKENS
    section_lead_weight: float = SECTION_LEAD_WEIGHT
    tuned_model: str = ""
    """Id of the tuned embedding model under the collection's `models/` ("" = the server's
    model); set by `groundwire tune` (core/tune), the one change after creation."""
    section_vectors: bool = True

    @property
    def chunking(self) -> ChunkingSpec:
        """The default chunking as a validated spec."""
        return ChunkingSpec(self.chunker_kind, self.chunk_max_tokens, self.chunk_overlap_tokens)

    def to_json(self) -> str:
        """Serialise for the store's meta table."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CollectionConfig:
        """Inverse of to_json; keys added in later versions take their defaults when absent."""
        raw = json.loads(text)
        dense = DenseIndexSpec(**raw.pop("dense"))
        kind = ChunkerKind(raw.pop("chunker_kind", ChunkerKind.STRUCTURE.value))
        raw.setdefault("section_lead_weight", 0.0)  # stored before section leads: plain vectors
        raw.setdefault("section_vectors", False)  # stored before section vectors: none
        return cls(dense=dense, chunker_kind=kind, **raw)
