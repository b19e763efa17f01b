"""The on-disk format of a saved `FaissIndex`: one file, replaced atomically.

Layout: MAGIC, a little-endian uint32 header length, the JSON header (format version, spec,
dimension, store sequence, tombstone count), the tombstoned row ids as int64, then the
serialized FAISS index. Keeping everything in one file means the sequence can never disagree
with the index contents after a crash.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from core.dense.faiss_build import IdArray
from core.dense.framed_file import CorruptIndexFile, read_framed, write_framed
from core.dense.spec import DenseIndexSpec

INDEX_FILE = "dense.gwfaiss"
MAGIC = b"GWDENSE\x01"
FORMAT_VERSION = 1

__all__ = ["INDEX_FILE", "CorruptIndexFile", "SavedIndex", "read_index_file", "write_index_file"]


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
    header = {
        "format": FORMAT_VERSION,
        "spec": saved.spec.to_json(),
        "dimension": saved.dimension,
        "sequence": saved.sequence,
        "tombstones": int(saved.tombstones.size),
    }
    payload = faiss.serialize_index(saved.index)
    tombstones = np.ascontiguousarray(saved.tombstones, dtype="<i8")
    write_framed(directory / INDEX_FILE, MAGIC, header, [tombstones.tobytes(), payload.data])


def read_index_file(directory: Path) -> SavedIndex | None:
    """Read `directory / INDEX_FILE`; None when absent, `CorruptIndexFile` when unreadable."""
    return read_framed(directory / INDEX_FILE, MAGIC, FORMAT_VERSION, _parse)


def _parse(header: dict[str, Any], data: bytes, offset: int) -> SavedIndex:
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
