"""`ChunkingSpec`: which chunker splits a document, and its size and overlap in tokens."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from core.errors import FieldViolation, InvalidArgument
from core.ingest.chunking import MAX_MAX_TOKENS, MIN_MAX_TOKENS

DEFAULT_MAX_TOKENS = 200
DEFAULT_OVERLAP_TOKENS = 20


class ChunkerKind(str, Enum):
    """How a document is split into chunks."""

    STRUCTURE = "structure"  # headings give sections; code blocks and tables stay whole
    FIXED = "fixed"  # windows of at most max_tokens tokens, overlapping by overlap_tokens
    SENTENCE = "sentence"  # whole sentences packed up to max_tokens within a section


@dataclass(frozen=True, slots=True)
class ChunkingSpec:
    """A validated chunker choice; sizes are in embedding-model tokens.

    `overlap_tokens` is used by the fixed-size chunker (and by the sentence chunker when it has to
    cut a sentence longer than `max_tokens`); it must be smaller than `max_tokens` for every kind.
    Raises InvalidArgument naming `chunking.kind`, `chunking.max_tokens` and
    `chunking.overlap_tokens`, one violation per bad field.
    """

    kind: ChunkerKind = ChunkerKind.STRUCTURE
    max_tokens: int = DEFAULT_MAX_TOKENS
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS

    def __post_init__(self) -> None:
        violations = chunking_violations(self.max_tokens, self.overlap_tokens)
        if not isinstance(self.kind, ChunkerKind):
            names = ", ".join(kind.value for kind in ChunkerKind)
            violations.insert(
                0, FieldViolation("chunking.kind", f"must be one of {names}; got {self.kind!r}")
            )
        if violations:
            message = "; ".join(f"{v.field}: {v.description}" for v in violations)
            raise InvalidArgument(message, tuple(violations))


def chunking_violations(max_tokens: int, overlap_tokens: int) -> list[FieldViolation]:
    """What is wrong with a size and an overlap (empty when both are valid)."""
    violations: list[FieldViolation] = []
    if not _is_int(max_tokens) or not MIN_MAX_TOKENS <= max_tokens <= MAX_MAX_TOKENS:
        violations.append(
            FieldViolation(
                "chunking.max_tokens",
                f"must be between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS} tokens; got {max_tokens}",
            )
        )
    if not _is_int(overlap_tokens) or overlap_tokens < 0:
        violations.append(
            FieldViolation("chunking.overlap_tokens", f"must be 0 or more; got {overlap_tokens}")
        )
    elif _is_int(max_tokens) and overlap_tokens >= max_tokens:
        violations.append(
            FieldViolation(
                "chunking.overlap_tokens",
                f"must be smaller than chunking.max_tokens ({max_tokens}); got {overlap_tokens}",
            )
        )
    return violations


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
