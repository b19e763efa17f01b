"""Validation of memories to store; every violation names the field and the fix."""

from __future__ import annotations

import math
from collections.abc import Sequence

from core.errors import FieldViolation, InvalidArgument
from core.memory.records import MemoryDraft

MAX_TEXT_CHARS = 4000
DEFAULT_MAX_PER_REQUEST = 256


def validate_memories(
    memories: Sequence[MemoryDraft], max_per_request: int | None = DEFAULT_MAX_PER_REQUEST
) -> None:
    """Raise one `InvalidArgument` listing every problem, with fields like `memories[2].importance`.

    `max_per_request` None skips the count limit (the store re-checks memories it is given).
    """
    violations: list[FieldViolation] = []
    if not memories:
        violations.append(
            FieldViolation("memories", "must hold at least one memory; send 1 or more memories")
        )
    elif max_per_request is not None and len(memories) > max_per_request:
        violations.append(
            FieldViolation(
                "memories",
                f"holds {len(memories)} memories; the limit is {max_per_request} per request; "
                "split them over several requests",
            )
        )
    for index, memory in enumerate(memories):
        violations.extend(_memory_violations(f"memories[{index}]", memory))
    if violations:
        raise InvalidArgument(
            "; ".join(f"{v.field}: {v.description}" for v in violations), tuple(violations)
        )


def _memory_violations(prefix: str, memory: MemoryDraft) -> list[FieldViolation]:
    found: list[FieldViolation] = []
    if not memory.text.strip():
        found.append(
            FieldViolation(
                f"{prefix}.text", "must not be empty or whitespace; send the text to remember"
            )
        )
    elif len(memory.text) > MAX_TEXT_CHARS:
        found.append(
            FieldViolation(
                f"{prefix}.text",
                f"is {len(memory.text)} characters long; the limit is {MAX_TEXT_CHARS}; "
                "shorten it or split it into several memories",
            )
        )
    if not (math.isfinite(memory.importance) and 0.0 < memory.importance <= 1.0):
        found.append(
            FieldViolation(
                f"{prefix}.importance",
                f"is {memory.importance:g}; must be greater than 0 and at most 1 "
                "(leave it unset for 0.5)",
            )
        )
    if memory.timestamp_ms is not None and memory.timestamp_ms < 0:
        found.append(
            FieldViolation(
                f"{prefix}.timestamp_unix_ms",
                f"is {memory.timestamp_ms}; must be >= 0 (Unix time in milliseconds; "
                "leave it unset for now)",
            )
        )
    if any(not key for key in memory.metadata):
        found.append(
            FieldViolation(f"{prefix}.metadata", "has an empty key; give every value a name")
        )
    return found
