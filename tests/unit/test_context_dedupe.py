"""Tests for core.context.dedupe: shingles, the Jaccard and containment thresholds."""

from __future__ import annotations

import pytest

from core.context.dedupe import is_near_duplicate, shingles


def numbered(count: int, start: int = 0) -> str:
    return " ".join(f"w{i}" for i in range(start, start + count))


def test_shingles_are_word_trigrams_case_and_punctuation_blind() -> None:
    assert shingles("A b, C d!").grams == frozenset({hash(("a", "b", "c")), hash(("b", "c", "d"))})
    assert shingles("two words").grams == frozenset({hash(("two", "words"))})
    assert shingles("A b, C d!") is shingles("A b, C d!")  # kept: computed once per text
    assert shingles("  ... ").grams == frozenset() and shingles("  ... ").wordless == "..."


@pytest.mark.parametrize(
    ("candidate", "selected", "expected"),
    [
        (numbered(100), numbered(100), True),
        # 98 shingles each, one word changed: 95 shared of 101 -> Jaccard 0.94.
        (numbered(100).replace("w50", "changed"), numbered(100), True),
        # 98 vs 108 shingles, all 98 shared: Jaccard 0.907, containment 1.0.
        (numbered(100), numbered(110), True),
        # 98 vs 120 shingles: Jaccard 0.82 < 0.9, but the candidate is contained in the other.
        (numbered(100), numbered(122), True),
        # The reverse: the candidate extends the selected text by 22 words -> kept.
        (numbered(122), numbered(100), False),
        # 100 candidate shingles, 94 of them shared (0.94 < 0.95) and Jaccard < 0.9.
        (numbered(96) + " x y z q r s", numbered(200), False),
        (numbered(30), numbered(30, start=15), False),
        ("...", "...", True),
        ("...", "!!!", False),
        ("...", "words here", False),
    ],
    ids=[
        "identical",
        "one_word_changed",
        "ten_words_longer",
        "contained",
        "extends",
        "containment_0.94",
        "half_overlap",
        "wordless_equal",
        "wordless_different",
        "wordless_vs_words",
    ],
)
def test_near_duplicate_rule(candidate: str, selected: str, expected: bool) -> None:
    assert is_near_duplicate(shingles(candidate), [shingles(selected)]) is expected


def test_any_selected_text_counts() -> None:
    selected = [shingles(numbered(50, start=500)), shingles(numbered(40))]
    assert is_near_duplicate(shingles(numbered(40)), selected)
    assert not is_near_duplicate(shingles(numbered(40)), [])
