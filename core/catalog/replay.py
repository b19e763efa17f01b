"""Bringing a collection's derived indexes up to date with its store when it is opened.

An index whose recorded sequence is behind the store's replays the change log from there. It is
rebuilt from the live store rows only when it is missing or unreadable, ahead of the store, built
with other settings, or when the changes it needs were pruned from the log (by compaction).
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from core.catalog import index_build
from core.dense import CorruptIndexFile
from core.dense.engine_factory import DenseEngine, load_dense_engine
from core.dense.spec import DenseIndexSpec
from core.lexical.tantivy_index import SEQUENCE_FILE, TantivyIndex
from core.store.protocol import Store
from core.store.records import Change

logger = logging.getLogger(__name__)

MISSING = "missing"
CORRUPT = "unreadable"
AHEAD = "ahead of the store"
PRUNED = "changes pruned from the log"
SETTINGS = "built with other settings"
TOO_LONG = "replay longer than a rebuild"

REPLAY_ALWAYS_ROWS = 10_000
REPLAY_MAX_SHARE = 0.5
"""The dense index replays up to max(REPLAY_ALWAYS_ROWS, REPLAY_MAX_SHARE * live chunks) added
rows; beyond that a rebuild is cheaper (adding to a large HNSW graph costs about twice as much
per vector as building it afresh)."""


class IndexAction(StrEnum):
    """What opening did to one derived index."""

    UP_TO_DATE = "up_to_date"
    CREATED = "created"  # missing, and the store has never changed: a new empty index
    REPLAYED = "replayed"
    REBUILT = "rebuilt"


@dataclass(frozen=True, slots=True)
class IndexOpenReport:
    """How one derived index was brought up to date on open.

    `index_sequence` is the sequence the index recorded (None when missing or unreadable);
    `reason` says why it was rebuilt ("" otherwise); `added`/`removed` count rows applied.
    """

    index: str
    action: IndexAction
    index_sequence: int | None
    store_sequence: int
    replayed_changes: int = 0
    added: int = 0
    removed: int = 0
    reason: str = ""
    elapsed_s: float = 0.0


@dataclass(frozen=True, slots=True)
class OpenReport:
    """What opening a collection did to its dense and lexical indexes."""

    dense: IndexOpenReport
    lexical: IndexOpenReport

    @property
    def rebuilt(self) -> bool:
        """True when either index was rebuilt from the store."""
        return IndexAction.REBUILT in (self.dense.action, self.lexical.action)

    @property
    def replayed_changes(self) -> int:
        """Changes replayed, summed over both indexes."""
        return self.dense.replayed_changes + self.lexical.replayed_changes


def changes_to_replay(
    store: Store, index_sequence: int, store_sequence: int
) -> list[Change] | None:
    """The changes (index_sequence, store_sequence], or None when the log no longer holds all."""
    changes = [c for c in store.changes_since(index_sequence) if c.seq <= store_sequence]
    expected = list(range(index_sequence + 1, store_sequence + 1))
    if [c.seq for c in changes] != expected:
        return None
    return changes


def load_dense(
    directory: Path,
    store: Store,
    spec: DenseIndexSpec,
    dimension: int,
    device: str = "cpu",
    save: bool = True,
) -> tuple[DenseEngine, IndexOpenReport]:
    """Load the dense engine saved under `directory` (the engine the factory picks for `spec` on
    `device`) and bring it to the store's sequence; build it from the store when needed (and,
    with `save`, write what was built: a process that only follows another's writes does not)."""
    started = time.perf_counter()
    sequence = store.sequence()
    try:
        loaded = load_dense_engine(directory, spec, dimension, device)
        reason = MISSING if loaded is None else ""
    except CorruptIndexFile:
        logger.warning("dense index in %s is unreadable", directory, exc_info=True)
        loaded, reason = None, CORRUPT
    index_sequence = None if loaded is None else loaded[1]
    changes: list[Change] | None = None
    if loaded is not None:
        engine = loaded[0]
        reason, changes = _dense_plan(store, engine, loaded[1], spec, dimension)
    if reason:
        engine = index_build.build_dense(store, spec, dimension, sequence, device)
        if save:
            engine.index.save(directory, sequence)
        action = IndexAction.CREATED if reason == MISSING and sequence == 0 else IndexAction.REBUILT
        report = IndexOpenReport("dense", action, index_sequence, sequence, reason=reason)
    elif changes is not None:
        net = index_build.net_change(changes)
        added = index_build.replay_dense(engine.index, store, net)
        report = _replayed("dense", index_sequence, sequence, len(changes), added, len(net.removed))
    else:
        report = IndexOpenReport("dense", IndexAction.UP_TO_DATE, index_sequence, sequence)
    return engine, _finish(report, started, directory)


def _dense_plan(
    store: Store, engine: DenseEngine, index_sequence: int, spec: DenseIndexSpec, dimension: int
) -> tuple[str, list[Change] | None]:
    """(why to rebuild, or ""; the changes to replay, None when there are none)."""
    sequence = store.sequence()
    if engine.spec != spec or (dimension > 0 and engine.index.dimension != dimension):
        return SETTINGS, None
    if index_sequence > sequence:
        return AHEAD, None
    if index_sequence == sequence:
        return "", None
    changes = changes_to_replay(store, index_sequence, sequence)
    if changes is None:
        return PRUNED, None
    adds = sum(len(change.added_row_ids) for change in changes)
    if adds > max(REPLAY_ALWAYS_ROWS, REPLAY_MAX_SHARE * store.counts()[1]):
        return TOO_LONG, None
    return "", changes


def load_lexical(directory: Path, store: Store) -> tuple[TantivyIndex, IndexOpenReport]:
    """Open the lexical index under `directory` and bring it to the store's sequence."""
    started = time.perf_counter()
    sequence = store.sequence()
    reason = "" if (directory / SEQUENCE_FILE).is_file() else MISSING
    try:
        index = TantivyIndex.open(directory)
    except (ValueError, KeyError, OSError):
        logger.warning("lexical index in %s is unreadable", directory, exc_info=True)
        shutil.rmtree(directory, ignore_errors=True)
        index, reason = TantivyIndex.open(directory), CORRUPT
    index_sequence = None if reason else index.sequence()
    changes: list[Change] | None = None
    if index_sequence is not None and index_sequence > sequence:
        reason = AHEAD
    elif index_sequence is not None and index_sequence < sequence:
        changes = changes_to_replay(store, index_sequence, sequence)
        reason = "" if changes is not None else PRUNED
    if reason:
        index_build.fill_lexical(index, store, sequence)
        action = IndexAction.CREATED if reason == MISSING and sequence == 0 else IndexAction.REBUILT
        report = IndexOpenReport("lexical", action, index_sequence, sequence, reason=reason)
    elif changes is not None:
        net = index_build.net_change(changes)
        added = index_build.replay_lexical(index, store, net, sequence)
        report = _replayed(
            "lexical", index_sequence, sequence, len(changes), added, len(net.removed)
        )
    else:
        report = IndexOpenReport("lexical", IndexAction.UP_TO_DATE, index_sequence, sequence)
    return index, _finish(report, started, directory)


def _replayed(
    kind: str, index_sequence: int | None, sequence: int, changes: int, added: int, removed: int
) -> IndexOpenReport:
    return IndexOpenReport(
        kind,
        IndexAction.REPLAYED,
        index_sequence,
        sequence,
        replayed_changes=changes,
        added=added,
        removed=removed,
    )


def _finish(report: IndexOpenReport, started: float, directory: Path) -> IndexOpenReport:
    elapsed = time.perf_counter() - started
    done = dataclasses.replace(report, elapsed_s=elapsed)
    if done.action is IndexAction.REPLAYED:
        logger.info(
            "%s index in %s replayed %d changes (%d added, %d removed; %s -> %s) in %.3fs",
            *(done.index, directory, done.replayed_changes, done.added, done.removed),
            *(done.index_sequence, done.store_sequence, elapsed),
        )
    elif done.action is IndexAction.REBUILT:
        logger.info(
            "%s index in %s rebuilt (%s; index at %s, store at %s) in %.3fs",
            *(done.index, directory, done.reason, done.index_sequence, done.store_sequence),
            elapsed,
        )
    return done
