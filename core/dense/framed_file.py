"""The framing shared by dense index files: MAGIC, a little-endian uint32 header length, a JSON
header carrying "format", then format-specific binary parts. Written atomically (temp file,
fsync, rename), so a crash leaves the old file or the complete new one."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from core.store.atomic_file import write_atomic

T = TypeVar("T")
_LENGTH = struct.Struct("<I")


class CorruptIndexFile(ValueError):
    """The index file exists but cannot be read; rebuild the index from the store."""


def write_framed(
    path: Path, magic: bytes, header: Mapping[str, Any], parts: Sequence[bytes | memoryview]
) -> None:
    """Atomically write MAGIC, the JSON header and `parts` to `path` (creating its directory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    encoded = json.dumps(dict(header)).encode("utf-8")
    write_atomic(path, [magic, _LENGTH.pack(len(encoded)), encoded, *parts])


def read_framed(
    path: Path, magic: bytes, version: int, parse: Callable[[dict[str, Any], bytes, int], T]
) -> T | None:
    """None when `path` is absent; else `parse(header, data, body_offset)`.

    Any failure (bad magic, unknown format version, or an error raised by `parse`) becomes
    `CorruptIndexFile` naming the file.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        if not data.startswith(magic):
            raise ValueError("bad magic number")
        offset = len(magic)
        (length,) = _LENGTH.unpack_from(data, offset)
        offset += _LENGTH.size
        header = json.loads(data[offset : offset + length])
        if header["format"] != version:
            raise ValueError(f"unsupported format {header['format']}")
        return parse(header, data, offset + length)
    except (ValueError, KeyError, TypeError, RuntimeError, struct.error) as exc:
        raise CorruptIndexFile(f"dense index file {path} is unreadable: {exc}") from exc
