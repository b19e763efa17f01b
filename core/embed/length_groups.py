"""Split a length-sorted batch of token rows into the padded calls that cost the least.

A transformer forward pass over a padded batch costs about `overhead + rows x width` token-units:
every row is computed to the longest row's width, and each call pays a fixed cost (graph
dispatch, thread-pool wake-ups, pooling). One padded call over a mixed batch wastes the padding;
one call per row pays the fixed cost each time. `length_groups` picks the contiguous split of a
length-sorted batch that minimises the total, by dynamic programming over split points.

Measured with onnxruntime on this project's 2-core CPU, all-MiniLM-L6-v2 (fp32 and int8):
CPU per call ~1.9 ms + ~0.28 ms per padded token, so the fixed cost is ~7 tokens' worth
(`CALL_OVERHEAD_TOKENS`). For 8 real questions (6-45 tokens) one padded call spent ~36 % of
its tokens on padding; benchmarks/embed/length_groups.py measures the split against it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

CALL_OVERHEAD_TOKENS = 8
"""Fixed cost of one forward call, in padded tokens (measured, see the module docstring)."""

__all__ = ["CALL_OVERHEAD_TOKENS", "length_groups"]


def length_groups(
    lengths: Sequence[int], max_rows: int, overhead_tokens: int = CALL_OVERHEAD_TOKENS
) -> list[tuple[int, int]]:
    """Half-open `(start, stop)` ranges covering `lengths` (sorted ascending) in order, each of
    at most `max_rows` rows, minimising `sum(overhead_tokens + rows * lengths[stop - 1])`."""
    if max_rows < 1:
        raise ValueError(f"max_rows must be >= 1, got {max_rows}")
    if any(b < a for a, b in itertools.pairwise(lengths)):
        raise ValueError("lengths must be sorted ascending")
    count = len(lengths)
    best = [0] * (count + 1)  # best[j]: least cost of rows [0, j)
    cut = [0] * (count + 1)  # cut[j]: where the last group of that split starts
    for stop in range(1, count + 1):
        width = lengths[stop - 1]
        best[stop], cut[stop] = min(
            (best[start] + overhead_tokens + (stop - start) * width, start)
            for start in range(max(0, stop - max_rows), stop)
        )
    groups: list[tuple[int, int]] = []
    stop = count
    while stop:
        groups.append((cut[stop], stop))
        stop = cut[stop]
    return groups[::-1]
