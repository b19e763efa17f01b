"""Crash-safe file replacement: write a temp file beside the target, fsync, rename, fsync dir."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from pathlib import Path


def write_atomic(path: Path, parts: Iterable[bytes | memoryview]) -> None:
    """Replace `path` with the concatenation of `parts`, atomically and durably.

    Readers see either the old file or the complete new one, never a mix, even after a crash.
    """
    temp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        with open(temp, "wb") as handle:
            for part in parts:
                handle.write(part)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    """Make a rename inside `directory` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
