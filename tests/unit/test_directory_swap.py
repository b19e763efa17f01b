"""Whole-directory replacement, with the atomic exchange and with the rename fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.catalog import directory_swap
from core.catalog.directory_swap import (
    remove_stale_siblings,
    replace_directory,
    sibling_temp,
)


def _make(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True)
    (directory / name).write_text(name)
    return directory


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "fallback"])
def test_replace_existing_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    if not exchange:
        monkeypatch.setattr(directory_swap, "_renameat2_exchange", lambda first, second: False)
    target = _make(tmp_path / "target", "old")
    staged = _make(sibling_temp(target, "restore"), "new")
    replace_directory(staged, target)
    assert [p.name for p in target.iterdir()] == ["new"]
    assert [p.name for p in tmp_path.iterdir()] == ["target"]


def test_replace_missing_directory(tmp_path: Path) -> None:
    staged = _make(tmp_path / ".staged", "new")
    replace_directory(staged, tmp_path / "target")
    assert [p.name for p in (tmp_path / "target").iterdir()] == ["new"]
    assert not staged.exists()


def test_remove_stale_siblings(tmp_path: Path) -> None:
    target = _make(tmp_path / "lexical", "keep")
    _make(sibling_temp(target, "compact"), "stale")
    _make(sibling_temp(target, "restore"), "other purpose")
    remove_stale_siblings(target, "compact")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names[1:] == ["lexical"] and names[0].startswith(".lexical.restore-")
