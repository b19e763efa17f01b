"""Ranking quality metrics over graded relevance judgments (qrels).

A ranking is a sequence of document ids, best first; relevance maps document ids to integer
grades, where a grade > 0 means relevant. Repeated ids in a ranking count once, at their first
position. Gains are linear in the grade with a log2(rank + 1) discount, as trec_eval and BEIR
compute nDCG.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from core.errors import InvalidArgument


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidArgument.field("k", f"must be an integer >= 1, got {k!r}")


def _top_k(ranked: Sequence[str], k: int) -> list[str]:
    """The first `k` distinct ids of `ranked`."""
    _check_k(k)
    seen: set[str] = set()
    top: list[str] = []
    for doc_id in ranked:
        if doc_id not in seen:
            seen.add(doc_id)
            top.append(doc_id)
            if len(top) == k:
                break
    return top


def mrr_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    """1 / rank of the first relevant id within the top k; 0.0 when there is none."""
    for rank, doc_id in enumerate(_top_k(ranked, k), start=1):
        if relevant.get(doc_id, 0) > 0:
            return 1.0 / rank
    return 0.0


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    """Share of the relevant ids found in the top k; 0.0 when nothing is relevant."""
    wanted = {doc_id for doc_id, grade in relevant.items() if grade > 0}
    if not wanted:
        _check_k(k)
        return 0.0
    found = sum(1 for doc_id in _top_k(ranked, k) if doc_id in wanted)
    return found / len(wanted)


def _dcg(grades: Sequence[int]) -> float:
    return math.fsum(grade / math.log2(rank + 1) for rank, grade in enumerate(grades, start=1))


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    """DCG of the top k over the DCG of the ideal ordering of the judged grades."""
    top = _top_k(ranked, k)
    ideal = sorted((grade for grade in relevant.values() if grade > 0), reverse=True)[:k]
    if not ideal:
        return 0.0
    gains = [max(relevant.get(doc_id, 0), 0) for doc_id in top]
    return _dcg(gains) / _dcg(ideal)


def evaluate_run(
    run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]], k: int = 10
) -> dict[str, float]:
    """Mean MRR@k, Recall@k and nDCG@k over every query in `qrels`.

    Keys are "mrr@<k>", "recall@<k>" and "ndcg@<k>". A query absent from `run` scores 0;
    queries in `run` without judgments are ignored.
    """
    _check_k(k)
    if not qrels:
        raise InvalidArgument.field("qrels", "no judged queries to evaluate; check the split")
    totals = {"mrr": 0.0, "recall": 0.0, "ndcg": 0.0}
    for query_id, relevant in qrels.items():
        ranked = run.get(query_id, ())
        totals["mrr"] += mrr_at_k(ranked, relevant, k)
        totals["recall"] += recall_at_k(ranked, relevant, k)
        totals["ndcg"] += ndcg_at_k(ranked, relevant, k)
    return {f"{name}@{k}": total / len(qrels) for name, total in totals.items()}
