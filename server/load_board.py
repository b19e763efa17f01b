"""`LoadBoard`: how many balanced RPCs each of the server's processes has under way, in a file
every process maps into memory.

One signed 64-bit slot per process, indexed by its number (0 the primary, 1.. the readers). Each
process writes only its own slot, from its event loop (so never two writers at once), and reads
the others' to choose where a Retrieve or Answer runs (server/read_balancing.py). A slot holds
`NOT_SERVING` while its process is starting, stopping or dead: the primary creates the board
with every slot so, a process sets its slot to 0 once it serves, back to `NOT_SERVING` before it
stops, and the primary's supervisor does so for a reader that died. An aligned 8-byte store is
atomic on every platform CPython runs on, so a reader of the board sees an old count or a new
one, never a torn one; an old one only makes one choice slightly worse.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

SLOT_BYTES = 8
NOT_SERVING = 1 << 40
"""The count of a process that takes no calls: larger than any real count."""


class LoadBoard:
    """The mapped board of `processes` slots in the file at `path` (see the module)."""

    def __init__(self, path: str | Path, processes: int) -> None:
        fd = os.open(path, os.O_RDWR)
        try:
            size = os.fstat(fd).st_size
            if size != processes * SLOT_BYTES:
                raise ValueError(
                    f"{path} holds {size} bytes, not the {processes * SLOT_BYTES} of a board "
                    f"of {processes} processes"
                )
            self._map = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        self._slots = memoryview(self._map).cast("q")

    @classmethod
    def create(cls, path: str | Path, processes: int) -> LoadBoard:
        """A new board at `path` (mode 0600) with every slot `NOT_SERVING`."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.ftruncate(fd, processes * SLOT_BYTES)
        finally:
            os.close(fd)
        board = cls(path, processes)
        for number in range(processes):
            board.set(number, NOT_SERVING)
        return board

    def get(self, number: int) -> int:
        """Process `number`'s count (`NOT_SERVING` when it takes no calls)."""
        return int(self._slots[number])

    def set(self, number: int, count: int) -> None:
        """Write process `number`'s count (only that process, or the primary for a dead one)."""
        self._slots[number] = count

    def close(self) -> None:
        """Unmap the board."""
        self._slots.release()
        self._map.close()
