"""The real questions of the labelled sets, for the embedding benchmarks that time or compare
query vectors (`length_groups.py`, `int8_query_variants.py`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from benchmarks.ghz.faq_index import DEFAULT_DATASET
from core.eval.beir import load_beir

ROOT = Path(__file__).resolve().parents[2]
SETS = {
    "python-faq": DEFAULT_DATASET,
    "perl-faq": ROOT / "benchmarks" / "data" / "perl-faq",
    "r-faq": ROOT / "benchmarks" / "data" / "r-faq",
    "man-pages": ROOT / "benchmarks" / "data" / "man-pages",
}
"""Labelled set directories by name (python-faq: $PYTHON_FAQ_DIR, else shared/ beside the
checkout, as `benchmarks/ghz/faq_index.py` finds it)."""


def questions(names: Iterable[str]) -> list[str]:
    """Every question of the named sets, set by set in file order."""
    found: list[str] = []
    for name in names:
        found += list(load_beir(SETS[name]).queries.values())
    return found
