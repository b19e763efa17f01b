"""`memory_hits` and `merge_memories`: conversion to domain hits and rank fusion."""

from __future__ import annotations

import copy

import pytest

from core.memory import Memory, ScoredMemory, memory_hits, merge_memories
from core.models import Chunk, Hit, SourceType, StageScores


def scored(number: int, score: float, metadata: dict[str, str] | None = None) -> ScoredMemory:
    memory = Memory(number, f"memory text {number}", 0.5, 1_000, metadata or {})
    return ScoredMemory(
        memory, score, relevance=0.5, retention=1.0, cosine=0.5, keyword_overlap=0.5
    )


def chunk_hit(row_id: int, rank: int, score: float) -> Hit:
    chunk = Chunk(
        row_id=row_id,
        chunk_id=f"doc-{row_id}#0",
        document_id=f"doc-{row_id}",
        ordinal=0,
        text=f"chunk {row_id}",
        section_path=("Guide",),
        has_code=False,
        token_estimate=3,
        source_type=SourceType.MARKDOWN,
        source_path=f"doc-{row_id}.md",
    )
    return Hit(chunk, rank, score, StageScores(fused=score))


def documents(count: int) -> list[Hit]:
    return [
        chunk_hit(row_id, rank, 1.0 - rank / 10)
        for rank, row_id in enumerate(range(11, 11 + count), start=1)
    ]


def ids(hits: list[Hit]) -> list[str]:
    return [hit.chunk.chunk_id for hit in hits]


def test_memory_hits_carry_the_memory_as_a_chunk() -> None:
    hits = memory_hits(
        [scored(7, 0.42, {"who": "ana"}), scored(3, 0.2)],
        start_rank=4,
        count_tokens=lambda t: len(t.split()),
    )
    first = hits[0]
    assert (first.rank, first.score, first.scores) == (4, 0.42, StageScores(memory=0.42))
    assert first.chunk.source_type is SourceType.MEMORY
    assert (first.chunk.chunk_id, first.chunk.document_id, first.chunk.row_id) == (
        "memory-7",
        "memory-7",
        -7,
    )
    assert first.chunk.metadata == {"who": "ana"}
    assert first.chunk.text == "memory text 7" and first.chunk.token_estimate == 3
    assert [hit.rank for hit in hits] == [4, 5]
    assert hits[1].chunk.row_id == -3 and hits[1].chunk.token_estimate == 3


def test_token_estimate_is_zero_without_a_counter() -> None:
    assert memory_hits([scored(1, 0.5)])[0].chunk.token_estimate == 0


def test_equal_weight_interleaves_documents_first() -> None:
    merged = merge_memories(documents(3), memory_hits([scored(1, 0.9), scored(2, 0.1)]), top_k=10)
    assert ids(merged) == ["doc-11#0", "memory-1", "doc-12#0", "memory-2", "doc-13#0"]
    assert [hit.rank for hit in merged] == [1, 2, 3, 4, 5]
    assert [hit.score for hit in merged] == pytest.approx([1 / 61, 1 / 61, 1 / 62, 1 / 62, 1 / 63])


def test_a_heavier_weight_moves_memories_up() -> None:
    merged = merge_memories(
        documents(3), memory_hits([scored(1, 0.9), scored(2, 0.1)]), top_k=4, weight=1.05
    )
    assert ids(merged) == ["memory-1", "memory-2", "doc-11#0", "doc-12#0"]
    light = merge_memories(documents(3), memory_hits([scored(1, 0.9)]), top_k=4, weight=0.5)
    assert ids(light) == ["doc-11#0", "doc-12#0", "doc-13#0", "memory-1"]


def test_merge_keeps_stage_scores_and_contract_invariants() -> None:
    merged = merge_memories(
        documents(5), memory_hits([scored(i, 1 / i) for i in range(1, 6)]), top_k=7
    )
    assert len(merged) == 7
    assert [hit.rank for hit in merged] == list(range(1, 8))
    scores = [hit.score for hit in merged]
    assert scores == sorted(scores, reverse=True)
    assert len(set(ids(merged))) == 7
    assert merged[0].scores == StageScores(fused=0.9)
    assert merged[1].scores == StageScores(memory=1.0)


def test_without_memories_hits_are_unchanged_but_cut_and_reranked() -> None:
    hits = documents(4)[1:]
    merged = merge_memories(hits, [], top_k=2)
    assert [(hit.rank, hit.score) for hit in merged] == [(1, 0.8), (2, 0.7)]
    assert ids(merged) == ["doc-12#0", "doc-13#0"]


def test_merge_does_not_change_its_inputs() -> None:
    hits, memories = documents(2), memory_hits([scored(1, 0.9)])
    saved = copy.deepcopy((hits, memories))
    merge_memories(hits, memories, top_k=3)
    assert (hits, memories) == saved


def test_only_memories() -> None:
    merged = merge_memories([], memory_hits([scored(2, 0.9), scored(1, 0.3)]), top_k=5)
    assert ids(merged) == ["memory-2", "memory-1"]


@pytest.mark.parametrize(
    ("top_k", "weight", "rrf_k"),
    [
        pytest.param(0, 1.0, 60, id="top_k"),
        pytest.param(5, 0.0, 60, id="weight"),
        pytest.param(5, float("inf"), 60, id="infinite-weight"),
        pytest.param(5, 1.0, 0, id="rrf_k"),
    ],
)
def test_rejects_bad_parameters(top_k: int, weight: float, rrf_k: int) -> None:
    with pytest.raises(ValueError) as error:
        merge_memories(documents(1), memory_hits([scored(1, 0.5)]), top_k, weight, rrf_k)
    assert str(error.value) == (
        f"need top_k >= 1, rrf_k >= 1 and a finite weight > 0, got {top_k}, {rrf_k} and {weight}"
    )
