"""`ChunkFilter` -> a Milvus boolean expression over the chunk schema, every value escaped.

A value is always written as a double-quoted string literal with `\\`, `"` and control
characters escaped (`string_literal`), and metadata keys go through the same function inside
`metadata[...]`, so no filter value or key can end the literal and add syntax of its own. Milvus'
grammar rejects raw line breaks inside literals, hence `\\n`, `\\r` and `\\t`; other control
characters cannot be written in a Milvus literal at all (milvus-lite knows no `\\x`/`\\u`
escapes), so a condition using one is left out of the expression (`None`): the expression only
narrows the candidates, and the pipeline still applies `ChunkFilter.matches` to every chunk, so
leaving a condition out can widen the candidate set, never admit a chunk the filter rejects.
Comparisons are never chained (`a <= x <= b` is two comparisons joined by `and`).
"""

from __future__ import annotations

import math
import sys

from core.retrieve.filters import ChunkFilter, MetadataRange

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def string_literal(value: str) -> str | None:
    """`value` as a Milvus string literal, or None when it holds an unwritable control char."""
    if any(ord(ch) < 0x20 and ch not in _ESCAPES for ch in value) or "\x7f" in value:
        return None
    return '"' + "".join(_ESCAPES.get(ch, ch) for ch in value) + '"'


def chunk_filter_expression(chunk_filter: ChunkFilter) -> str:
    """The conditions of `chunk_filter` Milvus can evaluate, joined by `and`; "" for none."""
    parts = [
        _in_list("document_id", sorted(chunk_filter.document_ids)),
        _in_list("source_type", sorted(t.value for t in chunk_filter.source_types)),
        None
        if chunk_filter.has_code is None
        else f"has_code == {str(chunk_filter.has_code).lower()}",
        *(_section_step(i, part) for i, part in enumerate(chunk_filter.section_prefix)),
        *(_metadata_equals(k, v) for k, v in sorted(chunk_filter.metadata_equals.items())),
        *(_metadata_in(k, sorted(v)) for k, v in sorted(chunk_filter.metadata_in.items())),
    ]
    parts.extend(_metadata_range(condition) for condition in chunk_filter.metadata_ranges)
    return " and ".join(f"({part})" for part in parts if part)


def _in_list(field: str, values: list[str]) -> str | None:
    literals = [string_literal(value) for value in values]
    if not values or any(literal is None for literal in literals):
        return None
    return f"{field} in [{', '.join(str(literal) for literal in literals)}]"


def _section_step(position: int, part: str) -> str | None:
    literal = string_literal(part)
    return None if literal is None else f"section_path[{position}] == {literal}"


def _metadata_equals(key: str, value: str) -> str | None:
    key_literal, value_literal = string_literal(key), string_literal(value)
    if key_literal is None or value_literal is None:
        return None
    return f"metadata[{key_literal}] == {value_literal}"


def _metadata_in(key: str, values: list[str]) -> str | None:
    """Equalities joined by `or` (milvus-lite takes `in` on plain fields only)."""
    key_literal = string_literal(key)
    literals = [string_literal(value) for value in values]
    if key_literal is None or not values or any(literal is None for literal in literals):
        return None
    return " or ".join(f"metadata[{key_literal}] == {literal}" for literal in literals)


def _metadata_range(condition: MetadataRange) -> str | None:
    """Bounds on `metadata_numbers[key]` (the values that parse as numbers, infinities as the
    largest floats); a value parsing as NaN passes a lower bound alone in `MetadataRange.matches`
    (`nan < minimum` is false, `nan <= maximum` too), so without a maximum the keys
    listed in `metadata_nan_keys` are admitted too."""
    key = string_literal(condition.key)
    if key is None:
        return None
    bounds = []
    if condition.minimum is not None and not math.isnan(condition.minimum):
        bounds.append(f"metadata_numbers[{key}] >= {_number(condition.minimum)}")
    if condition.maximum is not None and not math.isnan(condition.maximum):
        bounds.append(f"metadata_numbers[{key}] <= {_number(condition.maximum)}")
    if not bounds:
        return None
    within = " and ".join(bounds)
    if condition.maximum is not None:
        return within
    return f"({within}) or json_contains(metadata_nan_keys, {key})"


def _number(value: float) -> str:
    """A bound as a Milvus float literal (infinite bounds clamp to the largest floats)."""
    return repr(max(-sys.float_info.max, min(sys.float_info.max, value)))
