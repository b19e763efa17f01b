"""Metadata and risk filters over chunks. Pure predicates; nothing is mutated."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.models import Chunk, RiskLevel, SourceType


@dataclass(frozen=True, slots=True)
class MetadataRange:
    """Inclusive numeric bounds on one metadata key; None means unbounded."""

    key: str
    minimum: float | None = None
    maximum: float | None = None

    def matches(self, metadata: Mapping[str, str]) -> bool:
        """True when the value parses as a number within the bounds."""
        raw = metadata.get(self.key)
        if raw is None:
            return False
        try:
            value = float(raw)
        except ValueError:
            return False
        if self.minimum is not None and value < self.minimum:
            return False
        return self.maximum is None or value <= self.maximum


@dataclass(frozen=True, slots=True)
class ChunkFilter:
    """Conditions a chunk must all satisfy (AND); empty fields impose nothing."""

    document_ids: frozenset[str] = frozenset()
    source_types: frozenset[SourceType] = frozenset()
    has_code: bool | None = None
    section_prefix: tuple[str, ...] = ()
    metadata_equals: Mapping[str, str] = field(default_factory=dict)
    metadata_ranges: tuple[MetadataRange, ...] = ()
    metadata_in: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        """True when the filter admits every chunk."""
        return not (
            self.document_ids
            or self.source_types
            or self.has_code is not None
            or self.section_prefix
            or self.metadata_equals
            or self.metadata_ranges
            or self.metadata_in
        )

    def matches(self, chunk: Chunk) -> bool:
        """True when `chunk` satisfies every condition."""
        if self.document_ids and chunk.document_id not in self.document_ids:
            return False
        if self.source_types and chunk.source_type not in self.source_types:
            return False
        if self.has_code is not None and chunk.has_code != self.has_code:
            return False
        if chunk.section_path[: len(self.section_prefix)] != self.section_prefix:
            return False
        meta = chunk.metadata
        if any(meta.get(key) != value for key, value in self.metadata_equals.items()):
            return False
        if any(meta.get(key) not in values for key, values in self.metadata_in.items()):
            return False
        return all(condition.matches(meta) for condition in self.metadata_ranges)

    def describe(self) -> list[str]:
        """Human-readable lines, one per condition, for the response's applied_filters."""
        lines: list[str] = []
        if self.document_ids:
            lines.append(f"document_id in {sorted(self.document_ids)}")
        if self.source_types:
            lines.append(f"source_type in {sorted(t.value for t in self.source_types)}")
        if self.has_code is not None:
            lines.append(f"has_code = {str(self.has_code).lower()}")
        if self.section_prefix:
            lines.append(f"section_path starts with {list(self.section_prefix)}")
        lines.extend(f"metadata[{k!r}] = {v!r}" for k, v in sorted(self.metadata_equals.items()))
        for rng in self.metadata_ranges:
            low = "-inf" if rng.minimum is None else f"{rng.minimum:g}"
            high = "+inf" if rng.maximum is None else f"{rng.maximum:g}"
            lines.append(f"metadata[{rng.key!r}] in [{low}, {high}]")
        lines.extend(f"metadata[{k!r}] in {sorted(v)}" for k, v in sorted(self.metadata_in.items()))
        return lines


def risk_admits(chunk: Chunk, max_risk: RiskLevel) -> bool:
    """True when the chunk's risk level is at most `max_risk`."""
    return chunk.risk_level <= max_risk
