"""Cache keys: the normalised form of a text, and a stable hash of a frozen request's fields."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Collection, Mapping
from enum import Enum
from typing import Any


def cache_text_key(text: str) -> str:
    """`text` with runs of whitespace collapsed to one space and the ends trimmed.

    Only whitespace is normalised: case, accents and punctuation are kept, because they can
    change what an embedding model or the lexical index sees.
    """
    return " ".join(text.split())


def dataclass_fingerprint(value: object, exclude: Collection[str] = ()) -> str:
    """A SHA-256 hex digest of every field of the dataclass `value` except those in `exclude`.

    The digest is stable across processes and runs (no `hash()`), and distinguishes types
    (`1`, `1.0`, `True` and `"1"` differ). Nested dataclasses, enums, mappings, sets, tuples,
    lists, strings, bytes, numbers and None are supported; anything else raises `TypeError`
    so that a new field of an unsupported type cannot silently drop out of the key.
    """
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        raise TypeError(f"expected a dataclass instance, got {type(value).__name__}")
    names = {field.name for field in dataclasses.fields(value)}
    unknown = sorted(set(exclude) - names)
    if unknown:
        raise ValueError(f"cannot exclude unknown fields {unknown} of {type(value).__name__}")
    encoded = _dataclass(value, frozenset(exclude))
    text = json.dumps(encoded, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _dataclass(value: Any, exclude: frozenset[str] = frozenset()) -> list[Any]:
    return [
        "dataclass",
        type(value).__qualname__,
        [
            [field.name, _canonical(getattr(value, field.name))]
            for field in dataclasses.fields(value)
            if field.name not in exclude
        ],
    ]


def _canonical(value: Any) -> Any:
    """A JSON-serialisable, type-tagged form of `value` with a fixed order for unordered parts."""
    if value is None:
        return None
    if isinstance(value, Enum):  # before int/str: IntEnum and str-Enum members are both
        return ["enum", type(value).__qualname__, _canonical(value.value)]
    if isinstance(value, bool):  # before int: bool is an int subclass
        return ["bool", value]
    if isinstance(value, int):
        return ["int", str(value)]
    if isinstance(value, float):
        return ["float", value.hex()]
    if isinstance(value, str):
        return ["str", value]
    if isinstance(value, bytes):
        return ["bytes", value.hex()]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dataclass(value)
    if isinstance(value, Mapping):
        items = [[_canonical(k), _canonical(v)] for k, v in value.items()]
        return ["map", sorted(items, key=_sort_key)]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted((_canonical(item) for item in value), key=_sort_key)]
    if isinstance(value, (tuple, list)):
        return ["seq", [_canonical(item) for item in value]]
    raise TypeError(f"cannot fingerprint a value of type {type(value).__name__}: {value!r}")


def _sort_key(encoded: Any) -> str:
    return json.dumps(encoded, ensure_ascii=True, separators=(",", ":"))
