"""`MemoryStore` on real SQLite files: durability, the exact score, ranking, validation."""

from __future__ import annotations

import math
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.errors import FieldViolation, InvalidArgument
from core.memory import (
    MEMORY_FILE,
    MemoryDraft,
    MemoryStore,
    validate_memories,
)
from core.retrieve.keywords import extract_keywords

HOUR_MS = 3_600_000
NOW_MS = 1_750_000_000_000
REPO_ROOT = Path(__file__).resolve().parents[2]


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def rows(*vectors: np.ndarray) -> np.ndarray:
    return np.stack(vectors).astype(np.float32)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "collection" / MEMORY_FILE


@pytest.fixture
def store(path: Path) -> Iterator[MemoryStore]:
    opened = MemoryStore.open(path)
    yield opened
    opened.close()


# ---- durability ---------------------------------------------------------------------------------


def test_open_creates_a_wal_database_with_full_sync(store: MemoryStore, path: Path) -> None:
    assert path.exists() and store.count() == 0
    with sqlite3.connect(path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_memories_survive_reopen_and_numbers_continue(path: Path) -> None:
    first = MemoryStore.open(path)
    drafts = [
        MemoryDraft("the user prefers dark roast coffee", 0.8, NOW_MS - HOUR_MS, {"who": "ana"}),
        MemoryDraft("the deploy window is friday"),
    ]
    vectors = rows(unit(1, 0, 0), unit(0, 1, 0))
    assert first.add(drafts, vectors, now_ms=NOW_MS) == ["memory-1", "memory-2"]
    before = first.search(unit(1, 0, 0), extract_keywords("coffee"), NOW_MS, k=5)
    first.close()

    second = MemoryStore.open(path)
    assert second.count() == 2
    after = second.search(unit(1, 0, 0), extract_keywords("coffee"), NOW_MS, k=5)
    assert after == before
    assert after[0].memory.metadata == {"who": "ana"}
    assert after[1].memory.timestamp_ms == NOW_MS and after[1].memory.importance == 0.5
    assert second.add([MemoryDraft("third")], rows(unit(0, 0, 1))) == ["memory-3"]
    second.close()


def test_numbers_are_never_reused_even_after_rows_vanish(path: Path) -> None:
    with_store = MemoryStore.open(path)
    with_store.add([MemoryDraft("a"), MemoryDraft("b")], rows(unit(1, 0), unit(0, 1)))
    with_store.close()
    with sqlite3.connect(path) as raw:
        raw.execute("DELETE FROM memories")
    reopened = MemoryStore.open(path)
    assert reopened.count() == 0
    assert reopened.add([MemoryDraft("c")], rows(unit(1, 1))) == ["memory-3"]
    reopened.close()


def test_acknowledged_add_survives_a_crash(path: Path) -> None:
    script = f"""
import os, numpy as np
from pathlib import Path
from core.memory import MemoryDraft, MemoryStore
store = MemoryStore.open(Path({str(path)!r}))
store.add([MemoryDraft("remember me", 0.9)], np.ones((1, 4), np.float32))
os._exit(0)  # no close, no checkpoint
"""
    subprocess.run([sys.executable, "-c", script], check=True, cwd=REPO_ROOT)
    reopened = MemoryStore.open(path)
    [match] = reopened.search(unit(1, 1, 1, 1), frozenset(), NOW_MS, k=1)
    assert (match.memory.memory_id, match.memory.text) == ("memory-1", "remember me")
    reopened.close()


def test_embedding_problems_are_errors_and_store_nothing(store: MemoryStore) -> None:
    store.add([MemoryDraft("three wide")], rows(unit(1, 0, 0)))
    cases = [
        (rows(unit(1, 0)), "embeddings have dimension 2, the memories have 3"),
        (np.zeros((2, 3), np.float32), "embeddings must have shape (1, d), got (2, 3)"),
        (np.zeros((1, 3), np.float32), "embeddings must be finite and non-zero"),
    ]
    for embeddings, message in cases:
        with pytest.raises(ValueError) as error:
            store.add([MemoryDraft("x")], embeddings)
        assert str(error.value) == message
    assert store.count() == 1


# ---- scoring ------------------------------------------------------------------------------------


def test_score_matches_a_hand_computation(store: MemoryStore) -> None:
    importance, hours = 0.4, 30.0
    memory_vector = unit(3, 4, 0)  # cosine with (1, 0, 0) is 0.6
    store.add(
        [MemoryDraft("Coffee beans from Kenya arrive monday", importance, NOW_MS - 30 * HOUR_MS)],
        rows(memory_vector),
    )
    keywords = extract_keywords("which coffee arrives on monday from Brazil")
    assert keywords == ("coffee", "arrives", "monday", "brazil")  # "which", "on", "from": stop
    [match] = store.search(unit(1, 0, 0), keywords, NOW_MS, k=3, decay_rate=0.05)

    overlap = 2 / 4  # "coffee" and "monday"; "arrives" is not "arrive"
    relevance = 0.7 * 0.6 + 0.3 * overlap
    retention = math.exp(-0.05 * hours / (1 + 9 * importance))
    expected = importance * retention * (0.3 + 0.7 * relevance)
    assert match.keyword_overlap == pytest.approx(overlap, abs=1e-12)
    assert match.cosine == pytest.approx(0.6, abs=1e-6)
    assert match.relevance == pytest.approx(relevance, abs=1e-6)
    assert match.retention == pytest.approx(retention, abs=1e-12)
    assert match.score == pytest.approx(expected, abs=1e-6)


def test_negative_cosine_counts_as_zero_and_future_memories_have_not_faded(
    store: MemoryStore,
) -> None:
    store.add([MemoryDraft("opposite", 1.0, NOW_MS + 5 * HOUR_MS)], rows(unit(-1, 0)))
    [match] = store.search(unit(1, 0), frozenset(), NOW_MS, k=1)
    assert (match.relevance, match.retention) == (0.0, 1.0)
    assert match.score == pytest.approx(0.3)


def test_more_important_memory_ranks_first(store: MemoryStore) -> None:
    drafts = [
        MemoryDraft(f"note {i}", importance, NOW_MS) for i, importance in enumerate((0.2, 0.9, 0.5))
    ]
    store.add(drafts, rows(unit(1, 0), unit(1, 0), unit(1, 0)))
    matches = store.search(unit(1, 0), frozenset(), NOW_MS, k=3)
    assert [m.memory.importance for m in matches] == [0.9, 0.5, 0.2]


def test_recent_memory_ranks_above_an_old_one(store: MemoryStore) -> None:
    ages_h = [24 * 30, 1, 24]
    drafts = [MemoryDraft(f"note {age}", 0.5, NOW_MS - age * HOUR_MS) for age in ages_h]
    store.add(drafts, rows(unit(1, 0), unit(1, 0), unit(1, 0)))
    matches = store.search(unit(1, 0), frozenset(), NOW_MS, k=3)
    assert [m.memory.text for m in matches] == ["note 1", "note 24", "note 720"]
    assert matches[0].retention > matches[1].retention > matches[2].retention


def test_importance_slows_fading(store: MemoryStore) -> None:
    month_ago = NOW_MS - 24 * 30 * HOUR_MS
    store.add(
        [MemoryDraft("minor", 0.1, month_ago), MemoryDraft("major", 1.0, month_ago)],
        rows(unit(1, 0), unit(1, 0)),
    )
    minor, major = sorted(
        store.search(unit(1, 0), frozenset(), NOW_MS, k=2), key=lambda m: m.memory.importance
    )
    assert minor.retention == pytest.approx(math.exp(-0.01 * 720 / 1.9))
    assert major.retention == pytest.approx(math.exp(-0.01 * 720 / 10.0))


def test_relevant_memory_ranks_first_with_the_real_model(
    store: MemoryStore, embedder: SentenceTransformerEmbedder
) -> None:
    texts = [
        "The quarterly budget review is scheduled for the first week of April.",
        "Maria is allergic to peanuts and avoids Thai restaurants.",
        "The staging cluster runs Kubernetes 1.30 on three nodes.",
    ]
    store.add([MemoryDraft(t, 0.5, NOW_MS) for t in texts], embedder.embed_documents(texts))
    query = "what food allergy does Maria have"
    matches = store.search(embedder.embed_queries([query])[0], extract_keywords(query), NOW_MS, k=3)
    assert matches[0].memory.text == texts[1]
    assert matches[0].relevance > 0.5 > max(m.relevance for m in matches[1:])
    assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)


def test_k_and_min_relevance_limit_the_matches(store: MemoryStore) -> None:
    store.add(
        [
            MemoryDraft("close", 0.5, NOW_MS),
            MemoryDraft("far", 0.5, NOW_MS),
            MemoryDraft("mid", 0.5, NOW_MS),
        ],
        rows(unit(1, 0), unit(0, 1), unit(1, 1)),
    )
    assert [m.memory.text for m in store.search(unit(1, 0), frozenset(), NOW_MS, k=2)] == [
        "close",
        "mid",
    ]
    kept = store.search(unit(1, 0), frozenset(), NOW_MS, k=3, min_relevance=0.1)
    assert [m.memory.text for m in kept] == ["close", "mid"]
    with pytest.raises(ValueError) as error:
        store.search(unit(1, 0), frozenset(), NOW_MS, k=0)
    assert str(error.value) == "need k >= 1 and decay_rate >= 0, got 0 and 0.01"


def test_search_of_an_empty_store_is_empty(store: MemoryStore) -> None:
    assert store.search(unit(1, 0), {"anything"}, NOW_MS, k=5) == []


# ---- validation ---------------------------------------------------------------------------------


def test_each_bad_field_is_named_with_its_fix() -> None:
    drafts = [
        MemoryDraft("  \n"),
        MemoryDraft("x" * 4001),
        MemoryDraft("fine", importance=1.5),
        MemoryDraft("fine", importance=0.0, timestamp_ms=-5),
        MemoryDraft("fine", metadata={"": "v"}),
        MemoryDraft("fine", importance=float("nan")),
    ]
    with pytest.raises(InvalidArgument) as error:
        validate_memories(drafts)
    assert error.value.violations == (
        FieldViolation(
            "memories[0].text", "must not be empty or whitespace; send the text to remember"
        ),
        FieldViolation(
            "memories[1].text",
            "is 4001 characters long; the limit is 4000; shorten it or split it into several memories",
        ),
        FieldViolation(
            "memories[2].importance",
            "is 1.5; must be greater than 0 and at most 1 (leave it unset for 0.5)",
        ),
        FieldViolation(
            "memories[3].importance",
            "is 0; must be greater than 0 and at most 1 (leave it unset for 0.5)",
        ),
        FieldViolation(
            "memories[3].timestamp_unix_ms",
            "is -5; must be >= 0 (Unix time in milliseconds; leave it unset for now)",
        ),
        FieldViolation("memories[4].metadata", "has an empty key; give every value a name"),
        FieldViolation(
            "memories[5].importance",
            "is nan; must be greater than 0 and at most 1 (leave it unset for 0.5)",
        ),
    )
    assert str(error.value).startswith(
        "memories[0].text: must not be empty or whitespace; send the text to remember; "
        "memories[1].text: is 4001 characters long"
    )


@pytest.mark.parametrize(
    ("count", "limit", "message"),
    [
        pytest.param(
            0, 256, "memories: must hold at least one memory; send 1 or more memories", id="none"
        ),
        pytest.param(
            3,
            2,
            "memories: holds 3 memories; the limit is 2 per request; split them over several requests",
            id="too-many",
        ),
    ],
)
def test_memory_count_limits(count: int, limit: int, message: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        validate_memories([MemoryDraft("m")] * count, max_per_request=limit)
    assert str(error.value) == message


def test_boundaries_are_accepted() -> None:
    validate_memories(
        [MemoryDraft("x" * 4000, importance=1.0, timestamp_ms=0), MemoryDraft("y", 1e-9)]
    )


def test_add_validates_and_stores_nothing_on_error(store: MemoryStore) -> None:
    with pytest.raises(InvalidArgument) as error:
        store.add(
            [MemoryDraft("ok"), MemoryDraft("bad", importance=2.0)], rows(unit(1, 0), unit(0, 1))
        )
    assert str(error.value) == (
        "memories[1].importance: is 2; must be greater than 0 and at most 1 (leave it unset for 0.5)"
    )
    assert store.count() == 0


def test_adds_between_searches_keep_each_memory_with_its_own_values(store: MemoryStore) -> None:
    store.add([MemoryDraft("first", 0.2, NOW_MS)], rows(unit(1, 0)))
    assert [m.memory.text for m in store.search(unit(1, 0), frozenset(), NOW_MS, k=5)] == ["first"]
    store.add(
        [MemoryDraft("second", 0.9, NOW_MS), MemoryDraft("third", 0.6, NOW_MS - 10 * HOUR_MS)],
        rows(unit(0, 1), unit(1, 1)),
    )
    store.add([MemoryDraft("fourth", 0.4, NOW_MS)], rows(unit(-1, 0)))
    matches = {m.memory.text: m for m in store.search(unit(0, 1), {"fourth"}, NOW_MS, k=5)}
    assert {text: m.memory.importance for text, m in matches.items()} == {
        "first": 0.2,
        "second": 0.9,
        "third": 0.6,
        "fourth": 0.4,
    }
    assert matches["second"].cosine == pytest.approx(1.0)
    assert matches["third"].retention == pytest.approx(math.exp(-0.01 * 10 / 6.4))
    assert matches["fourth"].keyword_overlap == 1.0
    assert matches["first"].keyword_overlap == 0.0


def test_ties_go_to_the_older_memory_also_at_the_cut(store: MemoryStore) -> None:
    store.add([MemoryDraft(f"same {i}", 0.5, NOW_MS) for i in range(6)], rows(*[unit(1, 0)] * 6))
    assert [m.memory.memory_id for m in store.search(unit(1, 0), frozenset(), NOW_MS, k=3)] == [
        "memory-1",
        "memory-2",
        "memory-3",
    ]
