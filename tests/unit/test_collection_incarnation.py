"""A collection's incarnation: minted at create and restore, stored with it, kept across restarts."""

from __future__ import annotations

from pathlib import Path

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection_config import CollectionConfig


def test_the_incarnation_survives_a_restart_and_changes_on_re_create(tmp_path: Path) -> None:
    config = CollectionConfig(embedding_model="m", embedding_dim=4)
    catalog = CollectionCatalog(tmp_path)
    catalog.open_all()
    first = catalog.create(DEFAULT_TENANT, "docs", config).incarnation
    catalog.close()

    reopened = CollectionCatalog(tmp_path)
    reopened.open_all()
    assert reopened.get(DEFAULT_TENANT, "docs").incarnation == first
    reopened.drop(DEFAULT_TENANT, "docs")
    again = reopened.create(DEFAULT_TENANT, "docs", config)
    assert again.incarnation != first
    assert again.version().sequence == 0
    reopened.close()
