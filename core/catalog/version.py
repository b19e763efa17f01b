"""`CollectionVersion`: which incarnation of a collection, at which change, a result was read at.

A collection gets a new *incarnation* (a random id, stored in its database) whenever its contents
are replaced wholesale: when it is created (also under the name of a dropped one) and when a
snapshot is restored into it. Within one incarnation the store sequence never goes back, and
memories are only ever added. So two reads with equal versions saw the same contents, and a
version is never reached again once the collection changed: a new store restarting its sequence
at 1 still differs from the dropped one in its incarnation.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

INCARNATION_KEY = "incarnation"
"""Store meta key holding the collection's incarnation id."""


@dataclass(frozen=True, slots=True)
class CollectionVersion:
    """The contents of a collection at one moment."""

    incarnation: str
    """Minted at create and at restore; persisted with the collection (survives restarts)."""
    sequence: int
    """The store's change sequence (upserts, deletes, compaction never lower it)."""
    memories: int = 0
    """Long-term memories stored (they live in their own database and only grow)."""

    def is_older_than(self, other: CollectionVersion) -> bool:
        """True when `other` is a later state of the same incarnation."""
        return self.incarnation == other.incarnation and (
            self.sequence < other.sequence or self.memories < other.memories
        )


def new_incarnation() -> str:
    """A fresh incarnation id (128 random bits, hex)."""
    return uuid.uuid4().hex
