"""Conversions between groundwire's domain objects and Milvus entities (plain dicts)."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.models import Chunk, ChunkDraft, Document, RiskLevel, SourceType, chunk_id_for
from core.store.records import ChunkRisk, LexicalRow, StoredDocument

SECTION_SEPARATOR = " / "
_SOURCE_TYPES = {member.value: member for member in SourceType}
_RISK_LEVELS = {int(member): member for member in RiskLevel}


def lexical_text(section_path: Sequence[str], text: str) -> str:
    """What BM25 indexes of a chunk: its section line, then its text (as `TantivyIndex.add`)."""
    section = SECTION_SEPARATOR.join(section_path)
    return f"{section}\n{text}" if section else text


def metadata_numbers(metadata: Mapping[str, str]) -> tuple[dict[str, float], list[str]]:
    """The metadata values that parse as numbers (as `MetadataRange.matches` parses them;
    infinities clamped to the largest floats, which orders them the same against any finite
    bound) and the keys whose value parses as NaN (which pass any bound there)."""
    numbers: dict[str, float] = {}
    nan_keys: list[str] = []
    for key, raw in metadata.items():
        try:
            value = float(raw)
        except ValueError:
            continue
        if math.isnan(value):
            nan_keys.append(key)
        else:
            numbers[key] = max(-sys.float_info.max, min(sys.float_info.max, value))
    return numbers, sorted(nan_keys)


def chunk_entity(
    row_id: int,
    document: Document,
    content_hash: str,
    ordinal: int,
    draft: ChunkDraft,
    vector: np.ndarray,
    risk: ChunkRisk,
    links: Sequence[tuple[str, str]],
    anchors: Sequence[str],
) -> dict[str, Any]:
    """One chunk as a Milvus entity of the chunk collection."""
    numbers, nan_keys = metadata_numbers(document.metadata)
    flags, level = risk
    return {
        "row_id": row_id,
        "document_id": document.document_id,
        "content_hash": content_hash,
        "ordinal": ordinal,
        "text": draft.text,
        "lexical": lexical_text(draft.section_path, draft.text),
        "vector": [float(x) for x in vector],
        "section_path": list(draft.section_path),
        "risk_flags": list(flags),
        "metadata": dict(document.metadata),
        "metadata_numbers": numbers,
        "metadata_nan_keys": nan_keys,
        "has_code": draft.has_code,
        "token_estimate": draft.token_estimate,
        "page": draft.page,
        "risk_level": int(level),
        "source_type": document.source_type.value,
        "source_path": document.source_path,
        "title": document.title,
        "links": [list(link) for link in links],
        "anchors": list(anchors),
    }


def chunk_from_entity(entity: Mapping[str, Any]) -> Chunk:
    """A `Chunk` from an entity read with `CHUNK_OUTPUT_FIELDS`."""
    document_id = str(entity["document_id"])
    ordinal = int(entity["ordinal"])
    return Chunk(
        row_id=int(entity["row_id"]),
        chunk_id=chunk_id_for(document_id, ordinal),
        document_id=document_id,
        ordinal=ordinal,
        text=str(entity["text"]),
        section_path=tuple(str(part) for part in entity["section_path"]),
        has_code=bool(entity["has_code"]),
        token_estimate=int(entity["token_estimate"]),
        source_type=_SOURCE_TYPES[str(entity["source_type"])],
        source_path=str(entity["source_path"]),
        page=int(entity["page"]),
        title=str(entity["title"]),
        metadata={str(k): str(v) for k, v in dict(entity["metadata"]).items()},
        risk_flags=tuple(str(flag) for flag in entity["risk_flags"]),
        risk_level=risk_level_of(entity),
    )


def risk_level_of(entity: Mapping[str, Any]) -> RiskLevel:
    """The risk level of a chunk entity (one read with at least `risk_level`)."""
    return _RISK_LEVELS[int(entity["risk_level"])]


def lexical_row_from_entity(entity: Mapping[str, Any]) -> LexicalRow:
    """A `LexicalRow` from an entity with row_id, text, title and section_path."""
    return LexicalRow(
        row_id=int(entity["row_id"]),
        text=str(entity["text"]),
        title=str(entity["title"]),
        section=SECTION_SEPARATOR.join(str(part) for part in entity["section_path"]),
    )


def document_payload(
    document: Document, content_hash: str, chunks: int, seq: int
) -> dict[str, Any]:
    """The JSON payload of a document record (its text is stored in parts beside it)."""
    return {
        "content_hash": content_hash,
        "source_type": document.source_type.value,
        "source_path": document.source_path,
        "title": document.title,
        "metadata": dict(document.metadata),
        "chunk_count": chunks,
        "updated_seq": seq,
    }


def stored_document(
    document_id: str, payload: Mapping[str, Any], text: str, chunks: list[Chunk]
) -> StoredDocument:
    """A `StoredDocument` from its record payload, its joined text parts and its chunks."""
    return StoredDocument(
        document_id=document_id,
        text=text,
        source_type=_SOURCE_TYPES[str(payload["source_type"])],
        source_path=str(payload["source_path"]),
        title=str(payload["title"]),
        metadata={str(k): str(v) for k, v in dict(payload["metadata"]).items()},
        content_hash=str(payload["content_hash"]),
        updated_seq=int(payload["updated_seq"]),
        chunks=chunks,
    )
