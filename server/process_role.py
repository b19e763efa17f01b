"""The part one process plays in a server of `server.processes` processes.

A single process serves everything. With several, the primary is the only writer: it serves
every RPC on the shared port; each reader serves the read RPCs below itself (following the
primary's writes, core/catalog/following_collection.py) and forwards every other RPC to the
primary's private unix socket (server/write_forwarding.py). Every process of several also listens
on a socket of its own where the others hand it a Retrieve or Answer when it has fewer of them
under way (server/read_balancing.py, server/peer_calls.py); the sockets and the board of those
counts (server/load_board.py) live in one directory only this user can open.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

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


PRIVATE_PEER = "unix:"
"""How a call another of the server's processes forwarded shows its peer (a private socket)."""


def arrived_privately(context: Any) -> bool:
    """Whether the call on `context` (a grpc.aio.ServicerContext) came over a private unix socket
    of the server, forwarded by another of its processes, rather than from a caller."""
    return bool((context.peer() or "").startswith(PRIVATE_PEER))


BALANCED_RPCS = frozenset({"Retrieve", "Answer"})
"""Read RPCs whose work a process hands to another of the server's processes with fewer of them
under way (server/read_balancing.py): the ones that cost the cores something."""


@dataclass(frozen=True, slots=True)
class ProcessRole:
    """This process's kind, its number and the directory of the server's private sockets
    (unused by a single process)."""

    kind: ProcessKind = ProcessKind.SINGLE
    sockets: str = ""
    """The directory (mode 0700) of every process's private unix socket and the load board."""
    number: int = 0
    """0 for the primary (or a single process), 1.. for readers (in logs, and its board slot)."""
    processes: int = 1
    """How many processes the server runs."""

    @property
    def primary_socket(self) -> str:
        """Path of the unix socket the primary serves gRPC on, where readers forward writes."""
        return str(Path(self.sockets) / "primary.sock")

    @property
    def load_board(self) -> str:
        """Path of the file holding each process's count of balanced RPCs under way."""
        return str(Path(self.sockets) / "load-board")

    def peer_socket(self, number: int) -> str:
        """Path of the unix socket where process `number` takes the reads others hand it."""
        return str(Path(self.sockets) / f"peer-{number}.sock")

    @property
    def shares_port(self) -> bool:
        """True when several processes bind the port (SO_REUSEPORT on)."""
        return self.kind is not ProcessKind.SINGLE

    @property
    def is_reader(self) -> bool:
        """True for a reader, which never writes the data directory."""
        return self.kind is ProcessKind.READER


SINGLE = ProcessRole()
