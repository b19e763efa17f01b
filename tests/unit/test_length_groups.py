"""`length_groups` against brute force over every contiguous split, and its edge cases."""

from __future__ import annotations

import itertools
import random

import pytest

from core.embed.length_groups import length_groups


def _cost(lengths: list[int], groups: list[tuple[int, int]], overhead: int) -> int:
    return sum(overhead + (stop - start) * lengths[stop - 1] for start, stop in groups)


def _every_split(count: int, max_rows: int) -> list[list[tuple[int, int]]]:
    splits = []
    for cuts in itertools.product([False, True], repeat=max(count - 1, 0)):
        bounds = [0, *[i + 1 for i, cut in enumerate(cuts) if cut], count]
        groups = list(itertools.pairwise(bounds))
        if all(stop - start <= max_rows for start, stop in groups):
            splits.append(groups)
    return splits


@pytest.mark.parametrize("seed", range(40))
def test_the_split_costs_no_more_than_any_other(seed: int) -> None:
    rng = random.Random(seed)
    lengths = sorted(rng.randint(3, 60) for _ in range(rng.randint(1, 10)))
    max_rows, overhead = rng.randint(1, 6), rng.randint(0, 20)
    groups = length_groups(lengths, max_rows, overhead)
    assert [i for start, stop in groups for i in range(start, stop)] == list(range(len(lengths)))
    assert all(0 < stop - start <= max_rows for start, stop in groups)
    best = min(_cost(lengths, split, overhead) for split in _every_split(len(lengths), max_rows))
    assert _cost(lengths, groups, overhead) == best


def test_equal_lengths_fill_whole_batches_and_an_outlier_gets_its_own_call() -> None:
    groups = length_groups([10] * 70, 32, 8)
    assert len(groups) == 3 and all(stop - start <= 32 for start, stop in groups)
    assert length_groups([8, 9, 10, 11, 12, 13, 14, 200], 32, 8)[-1] == (7, 8)
    assert length_groups([12] * 8, 32, 8) == [(0, 8)]
    assert length_groups([], 32) == []


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="max_rows must be >= 1"):
        length_groups([1, 2], 0)
    with pytest.raises(ValueError, match="sorted ascending"):
        length_groups([5, 2], 8)
