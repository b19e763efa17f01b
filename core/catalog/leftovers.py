"""Clearing away what interrupted work leaves on disk, run at start-up before anything is served.

A crash (or kill) in the middle of a restore, a directory swap, a snapshot or a snapshot delete
leaves hidden directories behind, each as large as a collection:

- `.<name>.restore-<hex>` next to a collection: a staged restore that was never swapped in, or
  the old contents swapped out of the way. The collection directory is complete either way.
- `.<name>.swap-<hex>`: the rename fallback of `exchange_directories` (where the kernel has no
  atomic exchange) parks the live collection there for a moment. When `<name>` itself is
  missing, this is the only copy of the collection and is moved back, never deleted.
- `.tmp-<hex>` and `.deleting-<hex>` under a snapshots directory: a snapshot being written or
  being deleted. Published snapshots are renamed into place in one step, so neither is needed.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from core.catalog.directory_swap import RESTORE_PURPOSE, SWAP_PURPOSE, sibling_parts
from core.catalog.snapshot import is_unfinished_work

__all__ = ["LeftoverReport", "clear_collection_leftovers", "clear_snapshot_leftovers"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LeftoverReport:
    """What a clean-up did: directories removed, and collections moved back into place."""

    removed: tuple[Path, ...] = ()
    recovered: tuple[Path, ...] = ()


def clear_collection_leftovers(tenant_dir: Path) -> LeftoverReport:
    """Remove interrupted restores and swaps in one tenant's directory; a collection whose
    directory is missing while its swapped-aside copy exists is moved back first."""
    removed: list[Path] = []
    recovered: list[Path] = []
    for entry in sorted(tenant_dir.iterdir()):
        parts = sibling_parts(entry)
        if parts is None or parts[1] not in (RESTORE_PURPOSE, SWAP_PURPOSE) or not entry.is_dir():
            continue
        live = tenant_dir / parts[0]
        if parts[1] == SWAP_PURPOSE and not live.exists():
            entry.rename(live)
            recovered.append(live)
            logger.warning("moved %s back to %s: a swap was interrupted", entry, live)
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
        logger.warning("removed %s, left by an interrupted restore", entry)
    return LeftoverReport(tuple(removed), tuple(recovered))


def clear_snapshot_leftovers(snapshots_dir: Path) -> LeftoverReport:
    """Remove half-written and half-deleted snapshots anywhere under `snapshots_dir`
    (`<tenant>/<collection>/.tmp-<hex>` and `.deleting-<hex>`)."""
    if not snapshots_dir.is_dir():
        return LeftoverReport()
    removed: list[Path] = []
    for root in sorted(p for p in snapshots_dir.glob("*/*") if p.is_dir()):
        for entry in sorted(root.iterdir()):
            if is_unfinished_work(entry) and entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
                logger.warning("removed %s, left by an interrupted snapshot", entry)
    return LeftoverReport(tuple(removed))
