"""benchmarks/quality/faq_set: the FAQ sets' shared recipe, written in BEIR layout."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.quality.faq_set import MIN_BODY, FaqSection, write_faq_set

_BODY = "An answer long enough to be kept as a document of the corpus, " * 2


def _lines(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_questions_become_queries_and_short_bodies_are_dropped(tmp_path: Path) -> None:
    counts = write_faq_set(
        [
            FaqSection("faq#1", "How do I sort a list?", _BODY, in_faq=True),
            FaqSection("faq#2", "Why?", "too short", in_faq=True),
            FaqSection("faq#3", "Notes", _BODY, in_faq=True),
            FaqSection("guide#1", "What is a list?", _BODY, in_faq=False),
            FaqSection("faq#4", "How do I sort a list?", _BODY + "again", in_faq=True),
        ],
        tmp_path,
    )

    assert len("too short") < MIN_BODY <= len(_BODY)
    assert counts == {"documents": 4, "queries": 1}
    corpus = _lines(tmp_path / "corpus.jsonl")
    assert [(d["_id"], d["title"]) for d in corpus] == [
        ("faq#1", ""),  # a question's answer is found by its body alone
        ("faq#3", "Notes"),
        ("guide#1", "What is a list?"),  # a "?" heading outside the FAQ is not a question
        ("faq#4", ""),  # asked again: still headingless, but not a second query
    ]
    assert _lines(tmp_path / "queries.jsonl") == [{"_id": "q1", "text": "How do I sort a list?"}]
    assert (tmp_path / "qrels" / "test.tsv").read_text(encoding="utf-8") == (
        "query-id\tcorpus-id\tscore\nq1\tfaq#1\t1\n"
    )
