"""Dense scores at two granularities: each chunk's cosine mixed with its section vector's.

    score(chunk) = (1 - w) * cos(query, chunk) + w * cos(query, section of chunk)

The section vector (`core/embed/section_vectors.py`) embeds the section whole, heading path and
lead included, so a section ranks by what it is about and not only by its best 200-token passage;
every chunk of a section shares the section term, so a section with many chunks gains nothing from
their number, and the chunk term still picks which passage of the section comes first. w = 0 is
the plain chunk ranking; chunks without a section vector (collections written before they existed)
keep their chunk score. Only the dense candidates are rescored: no extra search.
"""

from __future__ import annotations

import numpy as np

Ranking = list[tuple[int, float]]

SECTION_WEIGHT = 0.5
"""Default w: both granularities count the same. A stated prior, not fitted to a query set (see
benchmarks/results/section_vectors.md for w = 0 ... 1 on both development sets)."""


def with_section_scores(
    ranking: Ranking,
    query: np.ndarray,
    section_ids: np.ndarray,
    section_vectors: np.ndarray,
    weight: float,
) -> Ranking:
    """`ranking` (chunk row id, cosine) rescored and re-sorted, best first (ties keep order).

    `query`: float32 (d,) unit vector; `section_ids`: int64 (n,) chunk row ids that have a section
    vector, `section_vectors`: float32 (n, d), row i the section vector of chunk section_ids[i].
    """
    if weight == 0.0 or not ranking or len(section_ids) == 0:
        return list(ranking)
    section_score = dict(zip(section_ids.tolist(), (section_vectors @ query).tolist(), strict=True))
    mixed = [
        (row_id, (1.0 - weight) * score + weight * section_score[row_id])
        if row_id in section_score
        else (row_id, score)
        for row_id, score in ranking
    ]
    order = sorted(range(len(mixed)), key=lambda i: -mixed[i][1])
    return [mixed[i] for i in order]
