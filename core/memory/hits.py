"""Memories as retrieval hits, and the fusion of memory hits into a ranked list of chunk hits.

Merge rule (weighted reciprocal rank fusion): the document hit at position i (1-based, in the
order given) scores 1 / (rrf_k + i); the memory hit at position j scores weight / (rrf_k + j).
Hits are ordered by that score, ties going to documents and then to the earlier position; the
first `top_k` are kept, ranked 1..n, and their `score` becomes the fused score. Each hit's
`scores` keep its own stage scores (`fused`/`dense`/`bm25` for chunks, `memory` for memories).
With weight 1 the lists interleave (document 1, memory 1, document 2, ...); a larger weight moves
memories up. Ranks are used rather than raw scores because the two lists score on
different scales (BM25, cosine, fused) that do not compare.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from core.memory.records import ScoredMemory
from core.models import Chunk, Hit, RiskLevel, SourceType, StageScores

DEFAULT_MERGE_RRF_K = 60


def memory_hits(
    scored: Sequence[ScoredMemory],
    start_rank: int = 1,
    count_tokens: Callable[[str], int] | None = None,
) -> list[Hit]:
    """One `Hit` per scored memory, in order, ranked from `start_rank`.

    The chunk has `source_type` MEMORY, `document_id` = `chunk_id` = the memory id, `row_id` =
    minus the memory number (chunk row ids are positive, so they never collide), the memory's
    metadata, and `token_estimate` from `count_tokens` (0 when not given). `score` and
    `scores.memory` are the memory score.
    """
    hits: list[Hit] = []
    for offset, match in enumerate(scored):
        memory = match.memory
        chunk = Chunk(
            row_id=-memory.number,
            chunk_id=memory.memory_id,
            document_id=memory.memory_id,
            ordinal=0,
            text=memory.text,
            section_path=(),
            has_code=False,
            token_estimate=count_tokens(memory.text) if count_tokens is not None else 0,
            source_type=SourceType.MEMORY,
            source_path="",
            metadata=dict(memory.metadata),
            risk_level=RiskLevel.NONE,
        )
        hits.append(
            Hit(
                chunk=chunk,
                rank=start_rank + offset,
                score=match.score,
                scores=StageScores(memory=match.score),
            )
        )
    return hits


def merge_memories(
    hits: Sequence[Hit],
    memories: Sequence[Hit],
    top_k: int,
    weight: float = 1.0,
    rrf_k: int = DEFAULT_MERGE_RRF_K,
) -> list[Hit]:
    """`hits` and `memories` fused by weighted RRF (see the module docstring), at most `top_k`.

    Returns new `Hit`s; the inputs are not changed. Without memories the hits are returned as
    they were (scores untouched), cut to `top_k` and ranked 1..n.
    """
    if top_k < 1 or rrf_k < 1 or not (math.isfinite(weight) and weight > 0):
        raise ValueError(
            f"need top_k >= 1, rrf_k >= 1 and a finite weight > 0, got {top_k}, {rrf_k} and {weight}"
        )
    if not memories:
        return [replace(hit, rank=rank) for rank, hit in enumerate(hits[:top_k], start=1)]
    candidates = [
        (1.0 / (rrf_k + position), 0, position, hit) for position, hit in enumerate(hits, start=1)
    ] + [
        (weight / (rrf_k + position), 1, position, hit)
        for position, hit in enumerate(memories, start=1)
    ]
    candidates.sort(key=lambda item: (-item[0], item[1], item[2]))
    return [
        replace(hit, rank=rank, score=fused)
        for rank, (fused, _, _, hit) in enumerate(candidates[:top_k], start=1)
    ]
