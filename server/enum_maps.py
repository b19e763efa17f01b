"""Proto enum values <-> domain enums. Unknown numbers are reported, never guessed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from core.errors import FieldViolation
from core.ingest.chunking_spec import ChunkerKind
from core.models import RiskLevel, SourceType
from core.retrieve.fusion import FusionMethod
from core.retrieve.modes import RetrievalMode
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import retrieval_service_pb2 as rs

T = TypeVar("T")

MODES: Mapping[int, RetrievalMode] = {
    rs.RETRIEVAL_MODE_DENSE: RetrievalMode.DENSE,
    rs.RETRIEVAL_MODE_LEXICAL: RetrievalMode.LEXICAL,
    rs.RETRIEVAL_MODE_HYBRID: RetrievalMode.HYBRID,
}
FUSIONS: Mapping[int, FusionMethod] = {
    rs.FUSION_METHOD_RRF: FusionMethod.RRF,
    rs.FUSION_METHOD_WEIGHTED: FusionMethod.WEIGHTED,
    rs.FUSION_METHOD_MAX: FusionMethod.MAX,
    rs.FUSION_METHOD_DBSF: FusionMethod.DBSF,
}
RISKS: Mapping[int, RiskLevel] = {
    common.RISK_LEVEL_NONE: RiskLevel.NONE,
    common.RISK_LEVEL_LOW: RiskLevel.LOW,
    common.RISK_LEVEL_MEDIUM: RiskLevel.MEDIUM,
    common.RISK_LEVEL_HIGH: RiskLevel.HIGH,
}
SOURCE_TYPES: Mapping[int, SourceType] = {
    common.SOURCE_TYPE_MARKDOWN: SourceType.MARKDOWN,
    common.SOURCE_TYPE_TEXT: SourceType.TEXT,
    common.SOURCE_TYPE_HTML: SourceType.HTML,
    common.SOURCE_TYPE_PDF: SourceType.PDF,
}
"""Source types a client may send or filter on; MEMORY is output-only (see OUTPUT_SOURCE_TYPES)."""
OUTPUT_SOURCE_TYPES: Mapping[int, SourceType] = {
    **SOURCE_TYPES,
    common.SOURCE_TYPE_MEMORY: SourceType.MEMORY,
}
CHUNKER_KINDS: Mapping[int, ChunkerKind] = {
    ix.CHUNKER_KIND_STRUCTURE: ChunkerKind.STRUCTURE,
    ix.CHUNKER_KIND_FIXED: ChunkerKind.FIXED,
    ix.CHUNKER_KIND_SENTENCE: ChunkerKind.SENTENCE,
}
EXPANSION_STRATEGIES: frozenset[int] = frozenset(
    {
        rs.EXPANSION_STRATEGY_UNSPECIFIED,
        rs.EXPANSION_STRATEGY_BASIC,
        rs.EXPANSION_STRATEGY_WEIGHTED,
        rs.EXPANSION_STRATEGY_TYPE_AWARE,
        rs.EXPANSION_STRATEGY_SMART,
    }
)


def invert(mapping: Mapping[int, T]) -> dict[T, Any]:
    """Domain value -> proto number."""
    return {value: key for key, value in mapping.items()}


def enum_violation(
    field: str, value: int, mapping: Mapping[int, object], enum_name: str
) -> FieldViolation:
    """A violation naming the accepted proto enum names."""
    descriptor = _DESCRIPTORS[enum_name]
    names = ", ".join(descriptor.values_by_number[n].name for n in sorted(mapping))
    return FieldViolation(field, f"unknown {enum_name} value {value}; use one of {names}")


_DESCRIPTORS = {
    "RetrievalMode": rs.DESCRIPTOR.enum_types_by_name["RetrievalMode"],
    "FusionMethod": rs.DESCRIPTOR.enum_types_by_name["FusionMethod"],
    "ExpansionStrategy": rs.DESCRIPTOR.enum_types_by_name["ExpansionStrategy"],
    "RiskLevel": common.DESCRIPTOR.enum_types_by_name["RiskLevel"],
    "SourceType": common.DESCRIPTOR.enum_types_by_name["SourceType"],
    "ChunkerKind": ix.DESCRIPTOR.enum_types_by_name["ChunkerKind"],
}
