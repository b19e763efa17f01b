"""Snapshots of a collection: take (while serving), list, delete, and restore.

A snapshot is a directory `<snapshots_root>/<snapshot_id>/` holding an online-backup copy of every
SQLite database of the collection (`store.sqlite3`, `memories.sqlite3` when present) at one
moment, the dense index at the same sequence unless it is "flat" (cheap to rebuild), and
`manifest.json` with checksums. The lexical index is never copied (its files change under
background merges; it rebuilds quickly): the collection rebuilds it when opened after a restore.

Consistency: under the collection's write lock, a read transaction is opened on each database
(and the dense index is serialised when asked); the lock is then released and the copies are made
from those pinned read transactions while writes go on.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from core.catalog.collection import (
    MODELS_DIR,
    STORE_FILE,
    Collection,
    dense_dir_name,
    directory_bytes,
)
from core.catalog.directory_swap import RESTORE_PURPOSE, replace_directory, sibling_temp
from core.catalog.snapshot_manifest import (
    SNAPSHOT_ID,
    FileEntry,
    Manifest,
    SnapshotInfo,
    file_entry,
    order_key,
    read_manifest,
    snapshot_directory,
    write_manifest,
)
from core.dense.spec import is_flat_at
from core.errors import DataLoss
from core.store.atomic_file import fsync_directory
from core.store.sqlite_maintenance import begin_snapshot_read, copy_database, read_position

__all__ = [
    "SnapshotInfo",
    "StagedRestore",
    "commit_restore",
    "delete_snapshot",
    "list_snapshots",
    "restore_snapshot",
    "stage_restore",
    "take_snapshot",
]

logger = logging.getLogger(__name__)

DATABASE_GLOB = "*.sqlite3"
MAX_ID_ATTEMPTS = 1000
COPY_BLOCK = 1 << 20
WRITING_PREFIX = ".tmp-"
"""A snapshot being written lives in `<WRITING_PREFIX><hex>` until it is renamed into place."""
DELETING_PREFIX = ".deleting-"
"""A snapshot being deleted is renamed to `<DELETING_PREFIX><hex>` first."""
_WORK_NAME = re.compile(
    rf"(?:{re.escape(WRITING_PREFIX)}|{re.escape(DELETING_PREFIX)})[0-9a-f]{{32}}"
)


def utc_now() -> datetime:
    """The current time in UTC."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class StagedRestore:
    """A verified copy of a snapshot in `directory`, next to the target, ready to swap in."""

    directory: Path
    info: SnapshotInfo


def take_snapshot(
    collection: Collection,
    snapshots_root: Path,
    include_dense_index: bool | None = None,
    clock: Callable[[], datetime] = utc_now,
) -> SnapshotInfo:
    """Copy `collection` into a new snapshot under `snapshots_root` while it keeps serving.

    `include_dense_index` also copies the dense index, so restore need not rebuild it; None
    (default) copies it unless the index is an exact flat one ("flat", or "auto" at or below its
    graph threshold), which rebuilds fast. `clock` gives the UTC
    time the id and `created_unix_ms` are taken from.
    """
    if include_dense_index is None:
        chunks = collection.store.counts()[1]
        include_dense_index = not is_flat_at(collection.config.dense, chunks)
    snapshots_root.mkdir(parents=True, exist_ok=True)
    temp = snapshots_root / f"{WRITING_PREFIX}{uuid.uuid4().hex}"
    temp.mkdir()
    try:
        info = _publish(temp, snapshots_root, _fill(collection, temp, include_dense_index, clock))
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    size = directory_bytes(snapshots_root / info.snapshot_id)
    logger.info(
        "snapshot %s of %s at sequence %d: %d documents, %d bytes",
        *(info.snapshot_id, collection.name, info.sequence, info.document_count, size),
    )
    return replace(info, size_bytes=size)


def is_unfinished_work(entry: Path) -> bool:
    """Whether `entry` is a snapshot being written or deleted (named as this module names them)."""
    return _WORK_NAME.fullmatch(entry.name) is not None


def list_snapshots(snapshots_root: Path) -> list[SnapshotInfo]:
    """Every readable snapshot under `snapshots_root`, newest first."""
    if not snapshots_root.is_dir():
        return []
    found: list[SnapshotInfo] = []
    for directory in snapshots_root.iterdir():
        if not SNAPSHOT_ID.fullmatch(directory.name) or not directory.is_dir():
            continue
        try:
            found.append(read_manifest(directory, directory_bytes(directory)).info)
        except DataLoss:
            logger.warning("skipping snapshot %s: unreadable manifest", directory, exc_info=True)
    return sorted(found, key=order_key, reverse=True)


def delete_snapshot(snapshots_root: Path, snapshot_id: str) -> int:
    """Remove a snapshot; the bytes freed. InvalidArgument or NotFound for a bad id."""
    directory = snapshot_directory(snapshots_root, snapshot_id)
    freed = directory_bytes(directory)
    doomed = snapshots_root / f"{DELETING_PREFIX}{uuid.uuid4().hex}"
    os.rename(directory, doomed)  # the snapshot disappears in one step
    fsync_directory(snapshots_root)
    shutil.rmtree(doomed, ignore_errors=True)
    return freed


def stage_restore(snapshots_root: Path, snapshot_id: str, target_directory: Path) -> StagedRestore:
    """Verify a snapshot while copying it into a fresh directory next to `target_directory`.

    Nothing at `target_directory` changes, so the collection can keep serving meanwhile.
    DataLoss when a file is missing or fails its checksum; InvalidArgument or NotFound for a
    bad id.
    """
    source = snapshot_directory(snapshots_root, snapshot_id)
    manifest = read_manifest(source)
    target_directory.parent.mkdir(parents=True, exist_ok=True)
    staged = sibling_temp(target_directory, RESTORE_PURPOSE)
    try:
        for name, expected in sorted(manifest.files.items()):
            _copy_verified(source / name, staged / name, expected, snapshot_id)
        for directory in {staged, *((staged / name).parent for name in manifest.files)}:
            fsync_directory(directory)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return StagedRestore(staged, replace(manifest.info, size_bytes=directory_bytes(source)))


def commit_restore(staged: StagedRestore, target_directory: Path) -> None:
    """Swap a staged restore in place of `target_directory` (atomically where supported).

    Close the collection at `target_directory` first and open it again afterwards; it then
    rebuilds the indexes the snapshot lacks. On failure the staged copy is removed and
    `target_directory` is left as it was.
    """
    try:
        replace_directory(staged.directory, target_directory)
    except BaseException:
        shutil.rmtree(staged.directory, ignore_errors=True)
        raise


def restore_snapshot(
    snapshots_root: Path, snapshot_id: str, target_directory: Path
) -> SnapshotInfo:
    """`stage_restore` then `commit_restore`: `target_directory` now holds the snapshot."""
    staged = stage_restore(snapshots_root, snapshot_id, target_directory)
    commit_restore(staged, target_directory)
    return staged.info


def _fill(
    collection: Collection, temp: Path, include_dense_index: bool, clock: Callable[[], datetime]
) -> Manifest:
    """Copy the databases (and the dense index) into `temp`; the manifest to publish them with."""
    readers: dict[str, sqlite3.Connection] = {}
    try:
        with collection.write_lock:  # held only to pin every copy to one moment
            locked = time.perf_counter()
            for path in sorted(collection.directory.glob(DATABASE_GLOB)):
                readers[path.name] = begin_snapshot_read(path)
            if include_dense_index:
                collection.save_dense_copy(temp / dense_dir_name(collection.config))
            if collection.config.tuned_model:  # its own model: a restore must bring it along
                model = Path(MODELS_DIR) / collection.config.tuned_model
                shutil.copytree(collection.directory / model, temp / model)
            config = collection.config.to_json()
            created = clock()
            held = time.perf_counter() - locked
        logger.info("snapshot of %s held the write lock for %.3fs", collection.name, held)
        sequence, documents, chunks = read_position(readers[STORE_FILE])
        for name, reader in readers.items():
            copy_database(reader, temp / name)
    finally:
        for reader in readers.values():
            reader.close()
    files = {
        path.relative_to(temp).as_posix(): file_entry(path)
        for path in sorted(temp.rglob("*"))
        if path.is_file()
    }
    info = SnapshotInfo(
        snapshot_id=f"{created:%Y%m%dT%H%M%SZ}-{sequence}",
        collection=collection.name,
        sequence=sequence,
        document_count=documents,
        chunk_count=chunks,
        size_bytes=0,
        created_unix_ms=int(created.timestamp() * 1000),
        includes_dense_index=include_dense_index,
    )
    return Manifest(info, config, files)


def _publish(temp: Path, snapshots_root: Path, manifest: Manifest) -> SnapshotInfo:
    """Name the snapshot (adding "-2", "-3"... when taken) and move it into place atomically."""
    base = manifest.info.snapshot_id
    for attempt in range(1, MAX_ID_ATTEMPTS + 1):
        snapshot_id = base if attempt == 1 else f"{base}-{attempt}"
        final = snapshots_root / snapshot_id
        if final.exists():
            continue
        info = replace(manifest.info, snapshot_id=snapshot_id)
        write_manifest(temp, replace(manifest, info=info))
        fsync_directory(temp)
        try:
            os.rename(temp, final)
        except OSError:  # taken meanwhile by a concurrent snapshot
            if final.exists():
                continue
            raise
        fsync_directory(snapshots_root)
        return info
    raise FileExistsError(f"no free snapshot id for {base!r} under {snapshots_root}")


def _copy_verified(source: Path, target: Path, expected: FileEntry, snapshot_id: str) -> None:
    """Copy `source` to `target` (fsynced), checking size and SHA-256 of the bytes copied."""
    name = source.name
    digest = hashlib.sha256()
    size = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(source, "rb") as reader, open(target, "wb") as writer:
            while block := reader.read(COPY_BLOCK):
                digest.update(block)
                size += len(block)
                writer.write(block)
            writer.flush()
            os.fsync(writer.fileno())
    except FileNotFoundError as exc:
        raise DataLoss(
            f"snapshot {snapshot_id!r} is corrupt: {name} is missing; restore another snapshot "
            "(see ListSnapshots)"
        ) from exc
    if size != expected.size or digest.hexdigest() != expected.sha256:
        raise DataLoss(
            f"snapshot {snapshot_id!r} is corrupt: {name} does not match the checksum in its "
            "manifest; restore another snapshot (see ListSnapshots)"
        )
