"""Filling the derived indexes from the store: full builds and change-log replays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.dense.engine_factory import DenseEngine, create_dense_engine
from core.dense.protocol import DenseIndex
from core.dense.spec import DenseIndexSpec
from core.lexical.tantivy_index import TantivyIndex
from core.store.protocol import Store
from core.store.records import Change

REPLAY_BATCH = 4096
"""Row ids fetched from the store per query while replaying."""


@dataclass(frozen=True, slots=True)
class NetChange:
    """The net effect of a run of changes on an index: row ids to drop, then row ids to add.

    `added` holds every row id the changes added, live or not; only the still-live ones are
    fetched and added (a row added and removed again within the run is simply skipped).
    """

    removed: tuple[int, ...]
    added: tuple[int, ...]


def net_change(changes: Sequence[Change]) -> NetChange:
    """Fold `changes` (ascending seq) into one `NetChange`."""
    removed: set[int] = set()
    added: set[int] = set()
    for change in changes:
        removed.update(change.removed_row_ids)
        added.update(change.added_row_ids)
    return NetChange(tuple(sorted(removed)), tuple(sorted(added - removed)))


def build_dense(
    store: Store, spec: DenseIndexSpec, dimension: int, sequence: int, device: str = "cpu"
) -> DenseEngine:
    """A new engine for `spec` on `device` (the factory's choice) holding every live vector
    written at or before `sequence` (no tombstones)."""
    engine = create_dense_engine(spec, dimension, device)
    for row_ids, vectors in store.iter_live_vectors(max_seq=sequence):
        engine.index.add(row_ids, vectors)
    return engine


def fill_lexical(index: TantivyIndex, store: Store, sequence: int) -> int:
    """Replace the contents of `index` with every live chunk at `sequence` and commit; row count."""
    index.clear()
    count = 0
    for rows in store.iter_live_texts(max_seq=sequence):
        index.add(rows)
        count += len(rows)
    index.commit(sequence)
    return count


def replay_dense(index: DenseIndex, store: Store, change: NetChange) -> int:
    """Apply `change` to a dense index; how many vectors were added (removals are all applied)."""
    if change.removed:
        index.remove(np.asarray(change.removed, dtype=np.int64))
    added = 0
    for start in range(0, len(change.added), REPLAY_BATCH):
        row_ids, vectors = store.get_vectors(change.added[start : start + REPLAY_BATCH])
        if row_ids.size:
            index.add(row_ids, vectors)
            added += int(row_ids.size)
    return added


def replay_lexical(index: TantivyIndex, store: Store, change: NetChange, sequence: int) -> int:
    """Apply `change` to a lexical index and commit it at `sequence`; how many rows were added.

    Idempotent: `TantivyIndex.add` replaces a row id already present, so an index that is ahead
    of its recorded sequence (a crash between its commit and its sequence file) replays safely.
    """
    if change.removed:
        index.remove(list(change.removed))
    added = 0
    for start in range(0, len(change.added), REPLAY_BATCH):
        rows = store.get_lexical_rows(change.added[start : start + REPLAY_BATCH])
        index.add(rows)
        added += len(rows)
    index.commit(sequence)
    return added
