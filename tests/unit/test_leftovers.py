"""Start-up clears what interrupted restores, swaps and snapshots leave on disk, and moves a
collection parked aside by an interrupted swap back into place instead of deleting it."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from core.catalog.catalog import CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.catalog.directory_swap import SWAP_PURPOSE, sibling_temp
from core.catalog.maintenance import CollectionMaintenance
from core.catalog.snapshot import list_snapshots, stage_restore, take_snapshot
from tests.unit.collection_support import DIM, SPECS, store_row_ids, write

CONFIG = CollectionConfig(dense=SPECS["flat"], embedding_dim=DIM, embedding_model="test")
TENANT = "acme"


def _catalog_with_docs(data_dir: Path, documents: int = 3) -> tuple[CollectionCatalog, set[int]]:
    catalog = CollectionCatalog(data_dir)
    catalog.open_all()
    collection = catalog.create(TENANT, "docs", CONFIG)
    for i in range(documents):
        write(collection, f"d{i}")
    return catalog, store_row_ids(collection)


def _reopen(data_dir: Path) -> CollectionCatalog:
    catalog = CollectionCatalog(data_dir)
    catalog.open_all()
    return catalog


def test_a_restore_staged_but_never_swapped_in_is_removed(tmp_path: Path) -> None:
    catalog, rows = _catalog_with_docs(tmp_path)
    maintenance = CollectionMaintenance(catalog)
    snapshot = maintenance.snapshot(TENANT, "docs")
    target = catalog.directory_for(TENANT, "docs")
    staged = stage_restore(maintenance.snapshots_root(TENANT, "docs"), snapshot.snapshot_id, target)
    catalog.close()  # the server stops here: the staged copy is left next to the collection
    assert staged.directory.is_dir() and staged.directory.name.startswith(".docs.restore-")
    reopened = _reopen(tmp_path)
    assert not staged.directory.exists()
    assert store_row_ids(reopened.get(TENANT, "docs")) == rows
    reopened.close()


def test_a_collection_parked_by_an_interrupted_swap_is_moved_back(tmp_path: Path) -> None:
    catalog, rows = _catalog_with_docs(tmp_path)
    live = catalog.directory_for(TENANT, "docs")
    catalog.close()
    aside = sibling_temp(live, SWAP_PURPOSE)
    os.rename(live, aside)  # the rename fallback's first step, then a crash
    reopened = _reopen(tmp_path)
    assert live.is_dir() and not aside.exists()
    assert store_row_ids(reopened.get(TENANT, "docs")) == rows
    reopened.close()


def test_a_swapped_out_old_copy_is_removed_when_the_collection_is_in_place(
    tmp_path: Path,
) -> None:
    catalog, rows = _catalog_with_docs(tmp_path)
    live = catalog.directory_for(TENANT, "docs")
    catalog.close()
    aside = sibling_temp(live, SWAP_PURPOSE)
    aside.mkdir()
    (aside / "store.sqlite3").write_bytes(b"old contents")
    reopened = _reopen(tmp_path)
    assert not aside.exists()
    assert store_row_ids(reopened.get(TENANT, "docs")) == rows
    reopened.close()


def test_other_hidden_entries_are_left_alone(tmp_path: Path) -> None:
    catalog, _ = _catalog_with_docs(tmp_path)
    tenant_dir = catalog.directory_for(TENANT, "docs").parent
    catalog.close()
    keep = [
        tenant_dir / ".docs.restore-not-hex",
        tenant_dir / ".git",
        tenant_dir / f".docs.backup-{uuid.uuid4().hex}",
    ]
    for path in keep:
        path.mkdir()
    (tenant_dir / f".docs.restore-{uuid.uuid4().hex}.txt").write_text("a file, not ours")
    _reopen(tmp_path).close()
    assert all(path.is_dir() for path in keep)
    assert len(list(tenant_dir.glob(".docs.restore-*.txt"))) == 1


def test_half_written_and_half_deleted_snapshots_are_removed(tmp_path: Path) -> None:
    catalog, _ = _catalog_with_docs(tmp_path)
    maintenance = CollectionMaintenance(catalog)
    root = maintenance.snapshots_root(TENANT, "docs")
    published = take_snapshot(catalog.get(TENANT, "docs"), root)
    writing = root / f".tmp-{uuid.uuid4().hex}"
    deleting = root / f".deleting-{uuid.uuid4().hex}"
    for leftover in (writing, deleting):
        leftover.mkdir()
        (leftover / "store.sqlite3").write_bytes(b"partial")
    other_tenant = maintenance.snapshots_root("globex", "notes") / f".tmp-{uuid.uuid4().hex}"
    other_tenant.mkdir(parents=True)
    report = maintenance.clear_leftovers()
    assert set(report.removed) == {writing, deleting, other_tenant}
    assert not writing.exists() and not deleting.exists() and not other_tenant.exists()
    assert [s.snapshot_id for s in list_snapshots(root)] == [published.snapshot_id]
    catalog.close()


def test_no_snapshots_directory_is_nothing_to_do(tmp_path: Path) -> None:
    catalog = _reopen(tmp_path)
    report = CollectionMaintenance(catalog).clear_leftovers()
    assert (report.removed, report.recovered) == ((), ())
    catalog.close()
