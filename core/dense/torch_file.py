"""The on-disk format of a saved `TorchExactIndex`: one file, replaced atomically.

Layout (the same framing as `faiss_file`): MAGIC, a little-endian uint32 header length, the JSON
header (format version, dimension, store sequence, vector count n), the live row ids as int64
(n,), then the vectors as little-endian float32 (n, dimension). Only live vectors are written, so
tombstones never reach the disk. Written with `write_atomic`: a crash leaves the old file or the
complete new one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from core.dense.framed_file import read_framed, write_framed

INDEX_FILE = "dense.gwtorch"
MAGIC = b"GWTORCH\x01"
FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class SavedVectors:
    """Everything read back from a torch index file: row ids int64 (n,), vectors float32 (n, d)."""

    dimension: int
    sequence: int
    row_ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]


def write_vectors_file(directory: Path, saved: SavedVectors) -> None:
    """Atomically write `saved` to `directory / INDEX_FILE` (creating the directory)."""
    count = int(saved.row_ids.size)
    if saved.vectors.shape != (count, saved.dimension):
        raise ValueError(f"vectors shape {saved.vectors.shape} != ({count}, {saved.dimension})")
    header = {
        "format": FORMAT_VERSION,
        "dimension": saved.dimension,
        "sequence": saved.sequence,
        "count": count,
    }
    ids = np.ascontiguousarray(saved.row_ids, dtype="<i8")
    vectors = np.ascontiguousarray(saved.vectors, dtype="<f4")
    write_framed(directory / INDEX_FILE, MAGIC, header, [ids.data, vectors.data])


def read_vectors_file(directory: Path) -> SavedVectors | None:
    """Read `directory / INDEX_FILE`; None when absent, `CorruptIndexFile` when unreadable."""
    return read_framed(directory / INDEX_FILE, MAGIC, FORMAT_VERSION, _parse)


def _parse(header: dict[str, Any], data: bytes, offset: int) -> SavedVectors:
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
