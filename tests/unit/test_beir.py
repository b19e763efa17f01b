"""Tests for core.eval.beir: a tiny data set in tmp_path, error messages, and python-faq."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.ghz.faq_index import DEFAULT_DATASET
from core.errors import InvalidArgument
from core.eval.beir import BeirDataset, BeirDoc, load_beir, subset

PYTHON_FAQ = DEFAULT_DATASET  # $PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout


def write_beir(
    root: Path,
    corpus: list[str] | None = None,
    queries: list[str] | None = None,
    qrels: list[str] | None = None,
    split: str = "test",
) -> Path:
    corpus = (
        corpus
        if corpus is not None
        else [
            json.dumps({"_id": "d2", "title": "Second", "text": "beta"}),
            json.dumps({"_id": "d1", "title": "", "text": "alpha"}),
            "",
            json.dumps({"_id": 3, "text": "gamma"}),
        ]
    )
    queries = (
        queries
        if queries is not None
        else [
            json.dumps({"_id": "q1", "text": "what is alpha?"}),
            json.dumps({"_id": "q2", "text": "beta or gamma"}),
            json.dumps({"_id": "q3", "text": "unjudged"}),
        ]
    )
    qrels = (
        qrels
        if qrels is not None
        else [
            "query-id\tcorpus-id\tscore",
            "q1\td1\t1",
            "q2\td2\t2",
            "q2\t3\t1",
            "q2\td1\t0",
        ]
    )
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    (root / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    (root / "qrels" / f"{split}.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    return root


def test_loads_tiny_set(tmp_path: Path) -> None:
    dataset = load_beir(write_beir(tmp_path))
    assert dataset == BeirDataset(
        corpus={
            "d2": BeirDoc("d2", "Second", "beta"),
            "d1": BeirDoc("d1", "", "alpha"),
            "3": BeirDoc("3", "", "gamma"),
        },
        queries={"q1": "what is alpha?", "q2": "beta or gamma", "q3": "unjudged"},
        qrels={"q1": {"d1": 1}, "q2": {"d2": 2, "3": 1, "d1": 0}},
    )
    assert list(dataset.corpus) == ["d2", "d1", "3"], "file order is kept"


def test_other_split_and_no_header(tmp_path: Path) -> None:
    write_beir(tmp_path, qrels=["q1\td1\t1"], split="dev")
    assert load_beir(tmp_path, split="dev").qrels == {"q1": {"d1": 1}}


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument) as caught:
        load_beir(tmp_path / "nope")
    assert str(caught.value) == (
        f"{tmp_path / 'nope'}: not a directory; expected a BEIR data set directory"
    )


@pytest.mark.parametrize("missing", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_missing_file(tmp_path: Path, missing: str) -> None:
    write_beir(tmp_path)
    (tmp_path / missing).unlink()
    with pytest.raises(InvalidArgument) as caught:
        load_beir(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / missing}: file not found; a BEIR directory needs corpus.jsonl, "
        "queries.jsonl and qrels/<split>.tsv"
    )


def test_missing_split(tmp_path: Path) -> None:
    write_beir(tmp_path)
    with pytest.raises(InvalidArgument, match=r"qrels/dev\.tsv: file not found"):
        load_beir(tmp_path, split="dev")


GOOD_DOC = json.dumps({"_id": "d1", "text": "alpha"})


@pytest.mark.parametrize(
    ("file", "lines", "line_number", "problem"),
    [
        (
            "corpus.jsonl",
            [GOOD_DOC, "{not json"],
            2,
            "invalid JSON (Expecting property name enclosed in double quotes)",
        ),
        ("corpus.jsonl", ["[1, 2]"], 1, "expected a JSON object"),
        ("corpus.jsonl", [json.dumps({"_id": "d1"})], 1, "field 'text' must be a string, got None"),
        ("corpus.jsonl", [json.dumps({"text": "x"})], 1, "field '_id' must be a string, got None"),
        (
            "corpus.jsonl",
            [json.dumps({"_id": "d", "title": 5, "text": "x"})],
            1,
            "field 'title' must be a string, got 5",
        ),
        ("corpus.jsonl", [GOOD_DOC, "", GOOD_DOC], 3, "duplicate id 'd1'"),
        (
            "queries.jsonl",
            [json.dumps({"_id": "q1", "text": None})],
            1,
            "field 'text' must be a string, got None",
        ),
        (
            "qrels/test.tsv",
            ["query-id\tcorpus-id\tscore", "q1 d1 1"],
            2,
            "expected 3 tab-separated columns, got 1",
        ),
        ("qrels/test.tsv", ["q1\td1\thigh"], 1, "score must be an integer, got 'high'"),
        ("qrels/test.tsv", ["q1\td1\t1", "q1\td1\t2"], 2, "duplicate judgment for 'q1'/'d1'"),
    ],
    ids=[
        "corpus_bad_json",
        "corpus_not_object",
        "corpus_no_text",
        "corpus_no_id",
        "corpus_bad_title",
        "corpus_duplicate",
        "query_no_text",
        "qrels_columns",
        "qrels_score",
        "qrels_duplicate",
    ],
)
def test_bad_line_names_file_and_line(
    tmp_path: Path, file: str, lines: list[str], line_number: int, problem: str
) -> None:
    write_beir(
        tmp_path,
        corpus=lines if file == "corpus.jsonl" else None,
        queries=lines if file == "queries.jsonl" else None,
        qrels=lines if file == "qrels/test.tsv" else None,
    )
    with pytest.raises(InvalidArgument) as caught:
        load_beir(tmp_path)
    assert str(caught.value) == f"{tmp_path / file}:{line_number}: {problem}"


@pytest.mark.skipif(not PYTHON_FAQ.is_dir(), reason="python-faq data set not available")
def test_python_faq() -> None:
    dataset = load_beir(PYTHON_FAQ)
    assert len(dataset.corpus) == 5093
    assert len(dataset.queries) == 172
    assert len(dataset.qrels) == 172
    assert next(iter(dataset.corpus)) == "about.rst.txt#0"
    assert dataset.corpus["about.rst.txt#0"].title == "About these documents"
    assert dataset.queries["q0"] == "Why does Python use indentation for grouping of statements?"
    assert dataset.qrels["q0"] == {"faq/design.rst.txt#1": 1}
    assert all(doc_id in dataset.corpus for judged in dataset.qrels.values() for doc_id in judged)


def test_subset_keeps_prefixed_documents_seeded_distractors_and_their_queries() -> None:
    docs = {f"faq#{i}": BeirDoc(f"faq#{i}", "", "a") for i in range(3)}
    docs |= {f"lib#{i}": BeirDoc(f"lib#{i}", "", "b") for i in range(20)}
    dataset = BeirDataset(
        corpus=docs,
        queries={"q1": "one?", "q2": "two?"},
        qrels={"q1": {"faq#1": 1}, "q2": {"lib#7": 1}},
    )
    small = subset(dataset, "faq#", 4)
    assert {i for i in small.corpus if i.startswith("faq#")} == {"faq#0", "faq#1", "faq#2"}
    assert len(small.corpus) == 7
    assert small == subset(dataset, "faq#", 4)  # seeded
    kept_lib7 = "lib#7" in small.corpus
    assert set(small.queries) == ({"q1", "q2"} if kept_lib7 else {"q1"})
    assert set(small.qrels) == set(small.queries)
