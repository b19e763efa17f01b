"""The on-disk format of a saved `FaissIndex`: one file, replaced atomically.

Layout: MAGIC, a little-endian uint32 header length, the JSON header (format version, spec,
dimension, store sequence, tombstone count), the tombstoned row ids as int64, then the
serialized FAISS index. Keeping everything in one file means the sequence can never disagree
with the index contents after a crash.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np

from core.dense.faiss_build import IdArray
from core.dense.spec import DenseIndexSpec
from core.store.atomic_file import write_atomic

INDEX_FILE = "dense.gwfaiss"
MAGIC = b"GWDENSE\x01"
FORMAT_VERSION = 1
_LENGTH = struct.Struct("<I")


class CorruptIndexFile(ValueError):
    """The index file exists but cannot be read; rebuild the index from the store."""


@dataclass(frozen=True, slots=True)
class SavedIndex:
    """Everything read back from an index file."""

    spec: DenseIndexSpec
    dimension: int
    sequence: int
    tombstones: IdArray
    index: faiss.Index


def write_index_file(directory: Path, saved: SavedIndex) -> None:
    """Atomically write `saved` to `directory / INDEX_FILE` (creating the directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    header = json.dumps(
        {
            "format": FORMAT_VERSION,
            "spec": saved.spec.to_json(),
            "dimension": saved.dimension,
            "sequence": saved.sequence,
            "tombstones": int(saved.tombstones.size),
        }
    ).encode("utf-8")
    payload = faiss.serialize_index(saved.index)
    tombstones = np.ascontiguousarray(saved.tombstones, dtype="<i8")
    parts: list[bytes | memoryview] = [
        MAGIC,
        _LENGTH.pack(len(header)),
        header,
        tombstones.tobytes(),
        payload.data,
    ]
    write_atomic(directory / INDEX_FILE, parts)


def read_index_file(directory: Path) -> SavedIndex | None:
    """Read `directory / INDEX_FILE`; None when absent, `CorruptIndexFile` when unreadable."""
    path = directory / INDEX_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return _parse(data)
    except (ValueError, KeyError, TypeError, RuntimeError, struct.error) as exc:
        raise CorruptIndexFile(f"dense index file {path} is unreadable: {exc}") from exc


def _parse(data: bytes) -> SavedIndex:
    if not data.startswith(MAGIC):
        raise ValueError("bad magic number")
    offset = len(MAGIC)
    (header_length,) = _LENGTH.unpack_from(data, offset)
    offset += _LENGTH.size
    header = json.loads(data[offset : offset + header_length])
    offset += header_length
    if header["format"] != FORMAT_VERSION:
        raise ValueError(f"unsupported format {header['format']}")
    count = int(header["tombstones"])
    tombstones = np.frombuffer(data, dtype="<i8", count=count, offset=offset).astype(np.int64)
    offset += count * 8
    payload = np.frombuffer(data, dtype=np.uint8, offset=offset)
    return SavedIndex(
        spec=DenseIndexSpec.from_json(header["spec"]),
        dimension=int(header["dimension"]),
        sequence=int(header["sequence"]),
        tombstones=tombstones,
        index=faiss.deserialize_index(payload),
    )
