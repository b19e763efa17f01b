"""Citation tags: the "[DOC:<document_id> | CHUNK:<chunk_id>]" marker placed before each chunk."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.models import Chunk

_DOC_ID = r"([^\[\]|\s](?:[^\[\]|]*[^\[\]|\s])?)"
_CHUNK_ID = r"([^\[\]\s](?:[^\[\]]*[^\[\]\s])?)"
_TAG_PATTERN = re.compile(rf"\[DOC:\s*{_DOC_ID}\s*\|\s*CHUNK:\s*{_CHUNK_ID}\s*\]")


@dataclass(frozen=True, slots=True)
class ContextCitation:
    """One cited chunk of an assembled context: its tag and where it came from."""

    tag: str
    document_id: str
    chunk_id: str
    section_path: tuple[str, ...]
    source_path: str


def citation_tag(chunk: Chunk) -> str:
    """Exactly "[DOC:<document_id> | CHUNK:<chunk_id>]"."""
    return f"[DOC:{chunk.document_id} | CHUNK:{chunk.chunk_id}]"


def citation_for(chunk: Chunk) -> ContextCitation:
    """The citation record of `chunk`."""
    return ContextCitation(
        tag=citation_tag(chunk),
        document_id=chunk.document_id,
        chunk_id=chunk.chunk_id,
        section_path=tuple(chunk.section_path),
        source_path=chunk.source_path,
    )


def parse_citation_tags(text: str) -> list[tuple[str, str]]:
    """Every (document_id, chunk_id) tag in `text`, in order of appearance, repeats included.

    Whitespace inside the brackets is tolerated (generators sometimes add or drop spaces);
    ids are returned without surrounding whitespace. Ids containing brackets (or, for document
    ids, "|") cannot be recovered from a tag.
    """
    return [(match.group(1), match.group(2)) for match in _TAG_PATTERN.finditer(text)]
