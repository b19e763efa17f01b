"""Dense scores for the chunks only the lexical retriever found (opt-in).

A hybrid request fuses the dense top-`depth` with the lexical top-`depth`. A chunk BM25 ranks
there that the dense search did not return has no dense score, and fusion counts it as 0: the
score of the least similar chunk the dense list holds, whatever its real similarity. With
`retrieval.score_lexical_candidates` its cosine is computed exactly (`Collection.dense_search`
within a set of row ids, which every dense engine answers exactly) and it joins the dense ranking
with its own score, so every fused candidate is ranked by what both retrievers say of it.

Min-max fusion then scales the dense list over every candidate, down to the least similar BM25
find: the dense scores of the chunks both lists hold move up, which gives BM25 more say where its
finds are far from the query. On the labelled sets (benchmarks/results/lexical_candidates.md) that
helps where BM25 is strong (man pages, the R manuals) and costs MRR where it is weak (python-faq),
so it is off by default; `groundwire eval` reports it beside the default for a user's own set.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Ranking = list[tuple[int, float]]
SubsetSearch = Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]]
"""(row ids int64 (m,), k) -> (scores, row ids) of shape (1, k): the query's exact top-k among
those rows (a row no longer indexed is absent, padded with id -1)."""


def with_lexical_candidates(dense: Ranking, lexical: Ranking, search: SubsetSearch) -> Ranking:
    """`dense` plus every row of `lexical` it lacks, scored by `search`, best first (ties keep
    `dense`'s rows ahead)."""
    have = {row_id for row_id, _ in dense}
    missing = list(dict.fromkeys(row_id for row_id, _ in lexical if row_id not in have))
    if not missing:
        return list(dense)
    scores, ids = search(np.asarray(missing, dtype=np.int64), len(missing))
    scored = [(int(i), float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
    return sorted([*dense, *scored], key=lambda pair: -pair[1])
