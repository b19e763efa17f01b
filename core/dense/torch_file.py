"""The on-disk format of a saved `TorchExactIndex`: one file, replaced atomically.

Layout (the same framing as `faiss_file`): MAGIC, a little-endian uint32 header length, the JSON
header (format version, dimension, store sequence, vector count n), the live row ids as int64
(n,), then the vectors as little-endian float32 (n, dimension). Only live vectors are written, so
tombstones never reach the disk. Written with `write_atomic`: a crash leaves the old file or the
complete new one.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from core.dense.faiss_file import CorruptIndexFile
from core.store.atomic_file import write_atomic

INDEX_FILE = "dense.gwtorch"
MAGIC = b"GWTORCH\x01"
FORMAT_VERSION = 1
_LENGTH = struct.Struct("<I")


@dataclass(frozen=True, slots=True)
class SavedVectors:
    """Everything read back from a torch index file: row ids int64 (n,), vectors float32 (n, d)."""

    dimension: int
    sequence: int
    row_ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]


def write_vectors_file(directory: Path, saved: SavedVectors) -> None:
    """Atomically write `saved` to `directory / INDEX_FILE` (creating the directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    count = int(saved.row_ids.size)
    if saved.vectors.shape != (count, saved.dimension):
        raise ValueError(f"vectors shape {saved.vectors.shape} != ({count}, {saved.dimension})")
    header = json.dumps(
        {
            "format": FORMAT_VERSION,
            "dimension": saved.dimension,
            "sequence": saved.sequence,
            "count": count,
        }
    ).encode("utf-8")
    ids = np.ascontiguousarray(saved.row_ids, dtype="<i8")
    vectors = np.ascontiguousarray(saved.vectors, dtype="<f4")
    parts: list[bytes | memoryview] = [
        MAGIC,
        _LENGTH.pack(len(header)),
        header,
        ids.data,
        vectors.data,
    ]
    write_atomic(directory / INDEX_FILE, parts)


def read_vectors_file(directory: Path) -> SavedVectors | None:
    """Read `directory / INDEX_FILE`; None when absent, `CorruptIndexFile` when unreadable."""
    path = directory / INDEX_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return _parse(data)
    except (ValueError, KeyError, TypeError, struct.error) as exc:
        raise CorruptIndexFile(f"dense index file {path} is unreadable: {exc}") from exc


def _parse(data: bytes) -> SavedVectors:
    if not data.startswith(MAGIC):
        raise ValueError("bad magic number")
    offset = len(MAGIC)
    (header_length,) = _LENGTH.unpack_from(data, offset)
    offset += _LENGTH.size
    header = json.loads(data[offset : offset + header_length])
    offset += header_length
    if header["format"] != FORMAT_VERSION:
        raise ValueError(f"unsupported format {header['format']}")
    count, dimension = int(header["count"]), int(header["dimension"])
    expected = offset + count * 8 + count * dimension * 4
    if len(data) != expected:
        raise ValueError(f"file has {len(data)} bytes, expected {expected}")
    ids = np.frombuffer(data, dtype="<i8", count=count, offset=offset).astype(np.int64)
    offset += count * 8
    flat = np.frombuffer(data, dtype="<f4", count=count * dimension, offset=offset)
    return SavedVectors(
        dimension=dimension,
        sequence=int(header["sequence"]),
        row_ids=ids,
        vectors=flat.astype(np.float32).reshape(count, dimension),
    )
