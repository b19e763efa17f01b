"""TantivyIndex on a real directory: stemming, hostile queries, removal, commits and reopening."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.lexical import LexicalSettings, TantivyIndex, sanitize_query
from core.store import LexicalRow

ROWS = [
    LexicalRow(1, "The corpus was indexed overnight by the batch job.", "Operations", "Jobs"),
    LexicalRow(2, "Python's str.join() takes an iterable of strings.", "Strings", "Methods / join"),
    LexicalRow(3, "Zebras are striped mammals of the African savanna.", "Animals", ""),
    LexicalRow(4, "Configure the server with a TOML file.", "Configuration", "Server"),
]

HOSTILE_QUERIES = [
    "Why is join() a string method?",
    "a:b (c",
    'unbalanced "quote',
    "title:zebra",
    "+-^~*!?",
    "AND",
    "NOT OR AND",
    "[1 TO 2]",
    "{a TO b}",
    "back\\slash",
    "über:straße",
    "x" * 5000,
    "join " * 500,
    "\x00\ufffd",
    "row_id:1",
]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[TantivyIndex]:
    opened = TantivyIndex.open(tmp_path / "lexical")
    opened.add(ROWS)
    opened.commit(7)
    yield opened
    opened.close()


def ids(hits: list[tuple[int, float]]) -> list[int]:
    return [row_id for row_id, _ in hits]


def test_stemming_matches_inflected_forms(index: TantivyIndex) -> None:
    assert ids(index.search("indexing", 5)) == [1]
    assert ids(index.search("zebra", 5)) == [3]
    assert ids(index.search("configuring servers", 5)) == [4]


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=range(len(HOSTILE_QUERIES)))
def test_hostile_queries_never_raise(index: TantivyIndex, query: str) -> None:
    hits = index.search(query, 3)
    assert len(hits) <= 3 and all(isinstance(row_id, int) for row_id in ids(hits))


def test_punctuated_question_finds_its_answer(index: TantivyIndex) -> None:
    assert ids(index.search("Why is join() a string method?", 5))[0] == 2
    assert ids(index.search("title:zebra", 5)) == [3]  # a field prefix is just another word


@pytest.mark.parametrize(
    "query", ["", "   ", "()::", "?!"], ids=["empty", "blank", "syntax", "punct"]
)
def test_queries_without_words_return_nothing(index: TantivyIndex, query: str) -> None:
    assert index.search(query, 5) == []


def test_sanitize_query() -> None:
    assert sanitize_query("Why is join() a String:method?", 10) == "why is join a string method"
    assert sanitize_query("a b c d", 2) == "a b"
    assert sanitize_query("AND OR NOT", 5) == "and or not"


def test_results_are_best_first_and_bounded(index: TantivyIndex) -> None:
    hits = index.search("the strings of the server", 10)
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    assert len(set(ids(hits))) == len(hits)
    assert len(index.search("the strings of the server", 1)) == 1
    assert index.search("zebra", 0) == []


def test_remove_takes_effect_on_commit(index: TantivyIndex) -> None:
    index.remove([3, 99])
    assert ids(index.search("zebra", 5)) == [3]  # not committed yet
    index.commit(8)
    assert index.search("zebra", 5) == [] and index.num_docs == 3 and index.sequence() == 8


def test_adding_a_row_id_again_replaces_it(index: TantivyIndex) -> None:
    index.add([LexicalRow(3, "Giraffes are tall.", "Animals", "")])
    index.add([LexicalRow(3, "Giraffes are very tall.", "Animals", "")])
    index.commit(8)
    assert index.num_docs == 4
    assert index.search("zebra", 5) == [] and ids(index.search("giraffe", 5)) == [3]


def test_reopen_keeps_documents_and_sequence(tmp_path: Path) -> None:
    directory = tmp_path / "lexical"
    first = TantivyIndex.open(directory)
    assert first.sequence() == 0 and first.num_docs == 0
    first.add(ROWS)
    first.commit(12)
    first.add([LexicalRow(9, "uncommitted work is rolled back", "", "")])
    first.close()
    second = TantivyIndex.open(directory)
    assert second.sequence() == 12 and second.num_docs == len(ROWS)
    assert ids(second.search("indexed", 5)) == [1] and second.search("uncommitted", 5) == []
    second.close()


def test_clear_then_rebuild(index: TantivyIndex) -> None:
    index.clear()
    index.add(ROWS[:1])
    index.commit(20)
    assert index.num_docs == 1 and index.sequence() == 20
    assert index.search("zebra", 5) == [] and ids(index.search("batch", 5)) == [1]


def test_section_header_is_searched_with_the_body_and_title_field_is_opt_in(tmp_path: Path) -> None:
    rows = [
        LexicalRow(1, "nothing here", "Zebra", ""),
        LexicalRow(2, "a zebra", "Other", ""),
        LexicalRow(3, "feeding times", "Guide", "Guide / Zebra care"),
    ]
    plain = TantivyIndex.open(tmp_path / "plain")
    boosted = TantivyIndex.open(tmp_path / "boosted", LexicalSettings(title_boost=10.0))
    for lexical in (plain, boosted):
        lexical.add(rows)
        lexical.commit(1)
    assert sorted(ids(plain.search("zebra", 5))) == [2, 3]
    assert ids(plain.search("feeding care", 5)) == [3]
    plain_scores, boosted_scores = dict(plain.search("zebra", 5)), dict(boosted.search("zebra", 5))
    assert ids(boosted.search("zebra", 5))[0] == 1
    assert boosted_scores[2] == pytest.approx(plain_scores[2], rel=1e-4)
    plain.close()
    boosted.close()


def test_writes_after_close_fail_clearly(tmp_path: Path) -> None:
    lexical = TantivyIndex.open(tmp_path / "closed")
    lexical.close()
    lexical.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed$"):
        lexical.add(ROWS)
