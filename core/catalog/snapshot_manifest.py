"""Snapshot ids, `SnapshotInfo`, and the manifest that lists (and checksums) a snapshot's files.

A snapshot directory holds `manifest.json` plus the files it names by relative POSIX path, each
with its size and SHA-256. Ids are "<UTC time>-<sequence>[-<n>]", e.g. "20261123T101500Z-42";
nothing else is accepted, so an id can never name a path outside the snapshots folder.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from core.errors import DataLoss, InvalidArgument, NotFound
from core.store.atomic_file import write_atomic

MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = 1
SNAPSHOT_ID = re.compile(r"(\d{8}T\d{6}Z)-(\d{1,19})(?:-(\d{1,6}))?")
_HASH_BLOCK = 1 << 20


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """One snapshot: its id, the collection and sequence it holds, counts, size and time.

    `size_bytes` is the snapshot's size on disk; `includes_dense_index` says whether the dense
    index was copied (otherwise it is rebuilt on restore; the lexical index always is).
    """

    snapshot_id: str
    collection: str
    sequence: int
    document_count: int
    chunk_count: int
    size_bytes: int
    created_unix_ms: int
    includes_dense_index: bool = False


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file of a snapshot: its size in bytes and SHA-256 (hex)."""

    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Manifest:
    """What `manifest.json` records: the info (without size), the collection config and files."""

    info: SnapshotInfo
    config_json: str
    files: Mapping[str, FileEntry]


def validate_snapshot_id(snapshot_id: str, field: str = "snapshot_id") -> str:
    """Return `snapshot_id` if well formed, else raise InvalidArgument naming `field`."""
    if not SNAPSHOT_ID.fullmatch(snapshot_id):
        raise InvalidArgument.field(
            field,
            f"{snapshot_id[:80]!r} is not a snapshot id; ids look like '20261123T101500Z-42' "
            "(see ListSnapshots)",
        )
    return snapshot_id


def snapshot_directory(snapshots_root: Path, snapshot_id: str) -> Path:
    """The directory of an existing snapshot; InvalidArgument or NotFound otherwise."""
    directory = snapshots_root / validate_snapshot_id(snapshot_id)
    if not (directory / MANIFEST_FILE).is_file():
        raise NotFound(
            f"snapshot {snapshot_id!r} does not exist; list the collection's snapshots with "
            "ListSnapshots"
        )
    return directory


def order_key(info: SnapshotInfo) -> tuple[int, int]:
    """Sort key, newest last: creation time, then the uniqueness suffix of the id."""
    match = SNAPSHOT_ID.fullmatch(info.snapshot_id)
    suffix = int(match.group(3)) if match and match.group(3) else 1
    return info.created_unix_ms, suffix


def file_entry(path: Path) -> FileEntry:
    """Size and SHA-256 of the file at `path`."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
            size += len(block)
    return FileEntry(size, digest.hexdigest())


def write_manifest(directory: Path, manifest: Manifest) -> None:
    """Write `directory / manifest.json` atomically."""
    info = manifest.info
    payload = {
        "format": MANIFEST_FORMAT,
        "snapshot_id": info.snapshot_id,
        "collection": info.collection,
        "sequence": info.sequence,
        "document_count": info.document_count,
        "chunk_count": info.chunk_count,
        "created_unix_ms": info.created_unix_ms,
        "includes_dense_index": info.includes_dense_index,
        "config": json.loads(manifest.config_json),
        "files": {
            name: {"bytes": entry.size, "sha256": entry.sha256}
            for name, entry in sorted(manifest.files.items())
        },
    }
    text = json.dumps(payload, indent=2, sort_keys=True).encode("utf-8")
    write_atomic(directory / MANIFEST_FILE, [text])


def read_manifest(directory: Path, size_bytes: int = 0) -> Manifest:
    """Parse `directory / manifest.json`; DataLoss when it is missing or malformed."""
    name = directory.name
    try:
        raw: dict[str, Any] = json.loads((directory / MANIFEST_FILE).read_text(encoding="utf-8"))
        if raw["format"] != MANIFEST_FORMAT:
            raise ValueError(f"unsupported manifest format {raw['format']!r}")
        files = {
            _safe_relative(key): FileEntry(int(v["bytes"]), str(v["sha256"]))
            for key, v in raw["files"].items()
        }
        info = SnapshotInfo(
            snapshot_id=str(raw["snapshot_id"]),
            collection=str(raw["collection"]),
            sequence=int(raw["sequence"]),
            document_count=int(raw["document_count"]),
            chunk_count=int(raw["chunk_count"]),
            size_bytes=size_bytes,
            created_unix_ms=int(raw["created_unix_ms"]),
            includes_dense_index=bool(raw["includes_dense_index"]),
        )
        config_json = json.dumps(raw["config"], sort_keys=True)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataLoss(
            f"snapshot {name!r} has an unreadable manifest ({exc}); delete it and take a new one"
        ) from exc
    if info.snapshot_id != name:
        raise DataLoss(f"snapshot {name!r} has the manifest of snapshot {info.snapshot_id!r}")
    return Manifest(info, config_json, files)


def _safe_relative(key: str) -> str:
    path = PurePosixPath(key)
    if path.is_absolute() or not path.parts or any(p in ("", ".", "..") for p in path.parts):
        raise ValueError(f"file name {key!r} is not a plain relative path")
    if "\\" in key:
        raise ValueError(f"file name {key!r} is not a plain relative path")
    return key
