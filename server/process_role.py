"""The part one process plays in a server of `server.processes` processes.

A single process serves everything. With several, the primary is the only writer: it serves
every RPC on the shared port and also on a private unix socket; each reader serves the read
RPCs below itself (following the primary's writes, core/catalog/following_collection.py) and
forwards every other RPC to the primary through that socket (server/write_forwarding.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

READER_RPCS = frozenset({"Retrieve", "Answer", "GetDocument", "ListCollections"})
"""RPCs a reader serves itself: reads whose answer comes from the store and indexes it follows.
Everything else (writes, maintenance, snapshots, memories, tuning, cache clearing, Stats) runs in
the primary, which reaches every process's caches (each process caches for itself): ClearCache
clears them all (server/cache_clearing.py) and Stats sums their counters
(server/cache_counting.py)."""


class ProcessKind(str, Enum):
    """Single process, the writing primary of several, or one of its readers."""

    SINGLE = "single"
    PRIMARY = "primary"
    READER = "reader"


@dataclass(frozen=True, slots=True)
class ProcessRole:
    """This process's kind and the primary's private socket (unused by a single process)."""

    kind: ProcessKind = ProcessKind.SINGLE
    primary_socket: str = ""
    """Path of the unix socket the primary listens on and readers forward to."""
    number: int = 0
    """0 for the primary (or a single process), 1.. for readers (in logs)."""

    @property
    def shares_port(self) -> bool:
        """True when several processes bind the port (SO_REUSEPORT on)."""
        return self.kind is not ProcessKind.SINGLE

    @property
    def is_reader(self) -> bool:
        """True for a reader, which never writes the data directory."""
        return self.kind is ProcessKind.READER


SINGLE = ProcessRole()
