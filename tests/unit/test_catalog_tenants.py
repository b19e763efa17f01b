"""The catalog scopes collections by tenant, enforces the per-tenant limit and migrates old layouts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from core.catalog.catalog import CollectionCatalog
from core.catalog.collection_config import CollectionConfig
from core.catalog.storage_backend import StorageBackend
from core.errors import AlreadyExists, Conflict, LimitExceeded, NotFound

CONFIG = CollectionConfig(embedding_model="test", embedding_dim=4)


def test_tenants_have_separate_namespaces_and_limits(
    tmp_path: Path, storage_backend: Callable[[], StorageBackend]
) -> None:
    catalog = CollectionCatalog(tmp_path, max_collections_per_tenant=2, backend=storage_backend())
    catalog.open_all()
    catalog.create("acme", "docs", CONFIG)
    catalog.create("acme", "notes", CONFIG)
    catalog.create("globex", "docs", CONFIG)  # same name, other tenant
    with pytest.raises(LimitExceeded) as caught:
        catalog.create("acme", "third", CONFIG)
    assert str(caught.value) == (
        "the tenant already has 2 collections, the limit (limits.max_collections_per_tenant); "
        "drop one before creating another"
    )
    with pytest.raises(AlreadyExists):
        catalog.create("globex", "docs", CONFIG)
    assert catalog.names("acme") == ["docs", "notes"]
    assert catalog.names("globex") == ["docs"]
    with pytest.raises(NotFound):
        catalog.get("globex", "notes")
    assert (tmp_path / "tenants" / "acme" / "notes").is_dir()
    catalog.close()
    reopened = CollectionCatalog(tmp_path, backend=storage_backend())
    reopened.open_all()
    assert reopened.names("acme") == ["docs", "notes"] and reopened.names("globex") == ["docs"]
    reopened.close()


def test_a_data_directory_from_before_tenants_moves_under_the_default_tenant(
    tmp_path: Path,
) -> None:
    old = CollectionCatalog(tmp_path)
    old.open_all()
    old.create("default", "docs", CONFIG)
    old.close()
    (tmp_path / "tenants" / "default").rename(tmp_path / "collections")
    (tmp_path / "tenants").rmdir()
    migrated = CollectionCatalog(tmp_path)
    migrated.open_all()
    assert migrated.names("default") == ["docs"]
    assert not (tmp_path / "collections").exists()
    migrated.close()


def test_a_reserved_name_counts_toward_the_limit_and_blocks_other_writers(tmp_path: Path) -> None:
    catalog = CollectionCatalog(tmp_path, max_collections_per_tenant=2)
    catalog.open_all()
    catalog.create("acme", "docs", CONFIG)
    with catalog.reserving("acme", "restored", existing=False):
        # the restore's new name holds the second slot: no third collection, no second restore
        with pytest.raises(LimitExceeded):
            catalog.create("acme", "other", CONFIG)
        with pytest.raises(LimitExceeded), catalog.reserving("acme", "more", existing=False):
            pass
        with pytest.raises(Conflict, match="a restore into collection 'restored' is in progress"):
            catalog.create("acme", "restored", CONFIG)
        with pytest.raises(Conflict), catalog.reserving("acme", "restored", existing=False):
            pass
        # what a restore's commit leaves: a collection directory under the reserved name
        staged = CollectionCatalog(tmp_path / "stage")
        staged.open_all()
        staged.create("acme", "restored", CONFIG).close()
        (tmp_path / "stage" / "tenants" / "acme" / "restored").rename(
            tmp_path / "tenants" / "acme" / "restored"
        )
        catalog.attach("acme", "restored", restored=True)
    assert catalog.names("acme") == ["docs", "restored"]
    with pytest.raises(LimitExceeded):
        catalog.create("acme", "third", CONFIG)
    with pytest.raises(AlreadyExists), catalog.reserving("acme", "docs", existing=False):
        pass
    with pytest.raises(NotFound), catalog.reserving("acme", "missing", existing=True):
        pass
    with pytest.raises(RuntimeError, match="outside reserving"):
        catalog.attach("acme", "docs", restored=True)
    with catalog.reserving("acme", "docs", existing=True):
        with pytest.raises(Conflict):
            catalog.drop("acme", "docs")
        with pytest.raises(AlreadyExists):
            catalog.attach("acme", "docs", restored=True)
    assert catalog.drop("acme", "docs") == 0
    catalog.close()
