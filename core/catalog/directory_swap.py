"""Replacing a whole directory in one step (restores, compacted lexical indexes)."""

from __future__ import annotations

import ctypes
import errno
import os
import re
import shutil
import uuid
from pathlib import Path

from core.store.atomic_file import fsync_directory

SWAP_PURPOSE = "swap"
"""`sibling_temp` purpose of the directory parked aside by the rename fallback."""
RESTORE_PURPOSE = "restore"
"""`sibling_temp` purpose of a staged restore (core.catalog.snapshot)."""
_SIBLING_NAME = re.compile(r"\.(?P<target>.+)\.(?P<purpose>[a-z]+)-[0-9a-f]{32}")
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def replace_directory(source: Path, target: Path) -> None:
    """Put the directory `source` in place of `target` and delete the old `target`.

    Both must be on one file system. Where the kernel supports it (Linux renameat2), the swap is
    one atomic exchange, so `target` always names a complete directory, even across a crash;
    elsewhere there is a moment in which `target` is missing.
    """
    if not target.exists():
        os.rename(source, target)
    else:
        exchange_directories(source, target)
        shutil.rmtree(source, ignore_errors=True)  # `source` now names the old contents
    fsync_directory(target.parent)


def exchange_directories(first: Path, second: Path) -> None:
    """Swap the names of two existing directories (atomically where the kernel allows)."""
    if _renameat2_exchange(first, second):
        return
    aside = sibling_temp(second, SWAP_PURPOSE)
    os.rename(second, aside)
    os.rename(first, second)
    os.rename(aside, first)


def sibling_temp(target: Path, purpose: str) -> Path:
    """A fresh hidden path next to `target` (same file system), e.g. `.name.restore-<hex>`."""
    return target.with_name(f".{target.name}.{purpose}-{uuid.uuid4().hex}")


def sibling_parts(entry: Path) -> tuple[str, str] | None:
    """(target name, purpose) when `entry` is named by `sibling_temp`, else None."""
    match = _SIBLING_NAME.fullmatch(entry.name)
    return None if match is None else (match.group("target"), match.group("purpose"))


def remove_stale_siblings(target: Path, purpose: str) -> None:
    """Delete leftovers of interrupted work named by `sibling_temp(target, purpose)`."""
    if not target.parent.is_dir():
        return
    for stale in target.parent.glob(f".{target.name}.{purpose}-*"):
        shutil.rmtree(stale, ignore_errors=True)


def _renameat2_exchange(first: Path, second: Path) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    renameat2.restype = ctypes.c_int
    result = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False  # not supported by this kernel or file system: fall back to renames
    raise OSError(code, os.strerror(code), str(first), None, str(second))
