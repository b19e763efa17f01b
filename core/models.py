"""Domain value objects shared by every stage of the pipeline."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum, IntEnum


class SourceType(str, Enum):
    """Format a document was ingested from."""

    MARKDOWN = "markdown"
    TEXT = "text"
    HTML = "html"
    PDF = "pdf"
    MEMORY = "memory"  # a long-term memory (AddMemories), never an ingested document

    @classmethod
    def from_path(cls, path: str, default: SourceType | None = None) -> SourceType:
        """Infer the type from a file extension; `default` (Markdown) when unknown."""
        lowered = path.lower()
        for suffixes, kind in SUFFIXES:
            if lowered.endswith(suffixes):
                return kind
        return default or cls.MARKDOWN


SUFFIXES: tuple[tuple[tuple[str, ...], SourceType], ...] = (
    ((".md", ".markdown", ".mdx"), SourceType.MARKDOWN),
    ((".txt", ".text", ".rst"), SourceType.TEXT),
    ((".html", ".htm", ".xhtml"), SourceType.HTML),
    ((".pdf",), SourceType.PDF),
)
"""File-name suffixes of every source type, lower case (the CLI picks files with these)."""


class RiskLevel(IntEnum):
    """Ordered risk grades; a filter at level L admits every chunk with level <= L."""

    NONE = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3


@dataclass(frozen=True, slots=True)
class Document:
    """A unit of ingestion as the caller sent it."""

    document_id: str
    text: str
    source_type: SourceType = SourceType.MARKDOWN
    source_path: str = ""
    title: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    content: bytes = b""  # raw bytes for binary formats (PDF); text formats use `text`

    def content_hash(self) -> str:
        """SHA-256 over everything that changes the chunks: text, bytes, type, path, title, metadata."""
        digest = hashlib.sha256()
        digest.update(hashlib.sha256(self.content).digest())
        for part in (self.text, self.source_type.value, self.source_path, self.title):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
        for key in sorted(self.metadata):
            digest.update(f"{key}\x01{self.metadata[key]}\x00".encode("utf-8", "surrogatepass"))
        return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A chunk as produced by a chunker, before it is stored."""

    text: str
    section_path: tuple[str, ...] = ()
    has_code: bool = False
    token_estimate: int = 0
    page: int = 0


@dataclass(frozen=True, slots=True)
class Chunk:
    """A stored chunk. `row_id` is the integer key shared by the store and both indexes."""

    row_id: int
    chunk_id: str
    document_id: str
    ordinal: int
    text: str
    section_path: tuple[str, ...]
    has_code: bool
    token_estimate: int
    source_type: SourceType
    source_path: str
    page: int = 0
    title: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    risk_flags: tuple[str, ...] = ()
    risk_level: RiskLevel = RiskLevel.NONE


def chunk_id_for(document_id: str, ordinal: int) -> str:
    """The public chunk id: "<document_id>#<ordinal>"."""
    return f"{document_id}#{ordinal}"


@dataclass(frozen=True, slots=True)
class StageScores:
    """Scores a hit received per stage; None where a stage did not see it."""

    dense: float | None = None
    bm25: float | None = None
    fused: float | None = None
    rerank: float | None = None
    expansion_discount: float | None = None
    dense_rank: int | None = None
    bm25_rank: int | None = None
    memory: float | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    """A ranked chunk in a retrieval result."""

    chunk: Chunk
    rank: int
    score: float
    scores: StageScores = StageScores()
    expanded_from: str = ""


class EdgeKind(str, Enum):
    """Type of a link-graph edge between two chunks."""

    LINK = "link"  # a hyperlink in the source chunk pointing at the target chunk's document/section
    NEXT = "next"  # the target is the following chunk of the same section
    PREV = "prev"  # the target is the preceding chunk of the same section


@dataclass(frozen=True, slots=True)
class Edge:
    """A typed, weighted, directed edge of a collection's link graph, between store row ids.

    `weight` is in (0, 1]; higher means a stronger relation.
    """

    source_row_id: int
    target_row_id: int
    kind: EdgeKind
    weight: float


def renumbered(hits: Iterable[Hit]) -> list[Hit]:
    """`hits` in the order given with ranks 1..n (hits already at their rank are kept as is)."""
    return [h if h.rank == r else replace(h, rank=r) for r, h in enumerate(hits, start=1)]
