"""Compaction: rebuild a collection's derived indexes without tombstones and reclaim store space.

Runs under the collection's write lock, so writers wait and the store's sequence is fixed while
it runs; searches keep using the old indexes until the new ones are swapped in. Every step is
crash-safe: the new dense file replaces the old atomically, the lexical directory is swapped in
one exchange, and the change log is pruned only once both indexes on disk hold the sequence.
Running it again on an unchanged collection changes nothing but the file layout.
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass

from core.catalog import index_build
from core.catalog.collection import COMPACT_PURPOSE, LEXICAL_DIR, Collection, directory_bytes
from core.catalog.directory_swap import sibling_temp
from core.errors import Conflict
from core.lexical.tantivy_index import TantivyIndex
from core.store.protocol import LocalStore
from core.store.sqlite_maintenance import prune_changes, reclaim_space

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """What a compaction did.

    `removed_tombstones`: tombstoned vectors dropped from the dense index; `disk_bytes_*`: size of
    the collection directory; `sequence`: the change sequence both rebuilt indexes hold;
    `pruned_changes`: change-log entries deleted; `elapsed_s`: wall time.
    """

    removed_tombstones: int
    disk_bytes_before: int
    disk_bytes_after: int
    sequence: int
    pruned_changes: int = 0
    elapsed_s: float = 0.0


def compact(collection: Collection) -> CompactionReport:
    """Compact `collection`: rebuild both indexes from live rows, prune the log, VACUUM."""
    store = collection.store
    if not isinstance(store, LocalStore):
        raise Conflict(f"collection {collection.name!r} is not kept in a local store file")
    started = time.perf_counter()
    with collection.write_lock:
        before = directory_bytes(collection.directory)
        sequence = store.sequence()
        tombstones = collection.dense_tombstones
        config = collection.config
        dense = index_build.build_dense(
            store, config.dense, config.embedding_dim, sequence, collection.device
        )
        lexical_build = sibling_temp(collection.directory / LEXICAL_DIR, COMPACT_PURPOSE)
        try:
            built = TantivyIndex.open(lexical_build)
            try:
                index_build.fill_lexical(built, store, sequence)
            finally:
                built.close()
            collection.swap_indexes(dense, lexical_build, sequence)
        finally:
            shutil.rmtree(lexical_build, ignore_errors=True)
        pruned = prune_changes(store.path, sequence)
        reclaim_space(store.path)
        after = directory_bytes(collection.directory)
    report = CompactionReport(
        removed_tombstones=tombstones,
        disk_bytes_before=before,
        disk_bytes_after=after,
        sequence=sequence,
        pruned_changes=pruned,
        elapsed_s=time.perf_counter() - started,
    )
    logger.info(
        "compacted %s at sequence %d: %d tombstones and %d log entries removed, %d -> %d bytes "
        "in %.3fs",
        *(collection.name, sequence, tombstones, pruned, before, after, report.elapsed_s),
    )
    return report
