"""The real questions of the labelled sets, for the embedding benchmarks that time or compare
query vectors (`length_groups.py`, `int8_query_variants.py`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from core.eval.beir import load_beir

ROOT = Path(__file__).resolve().parents[2]
SETS = {
    "python-faq": Path(os.environ.get("PYTHON_FAQ_DIR", "/work/shared/data/python-faq")),
    "perl-faq": ROOT / "benchmarks" / "data" / "perl-faq",
    "r-faq": ROOT / "benchmarks" / "data" / "r-faq",
}
"""Labelled set directories by name (python-faq from $PYTHON_FAQ_DIR when set)."""


def questions(names: Iterable[str]) -> list[str]:
    """Every question of the named sets, set by set in file order."""
    found: list[str] = []
    for name in names:
        found += list(load_beir(SETS[name]).queries.values())
    return found
