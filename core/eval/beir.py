"""Load a retrieval data set in the BEIR layout.

A BEIR directory holds `corpus.jsonl` (`{"_id", "title", "text"}` per line), `queries.jsonl`
(`{"_id", "text"}` per line) and `qrels/<split>.tsv` (`query-id<TAB>corpus-id<TAB>score`, with an
optional header row). Every query of `queries.jsonl` is kept, judged or not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import InvalidArgument

_QRELS_HEADER = ("query-id", "corpus-id")


@dataclass(frozen=True, slots=True)
class BeirDoc:
    """One corpus document."""

    doc_id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class BeirDataset:
    """Corpus (file order), queries and graded relevance judgments of one split."""

    corpus: dict[str, BeirDoc]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def _bad_line(path: Path, line_number: int, problem: str) -> InvalidArgument:
    return InvalidArgument(f"{path}:{line_number}: {problem}")


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) for every non-blank line of `path`."""
    if not path.is_file():
        raise InvalidArgument(
            f"{path}: file not found; a BEIR directory needs corpus.jsonl, queries.jsonl "
            "and qrels/<split>.tsv"
        )
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if line.strip():
                yield line_number, line.rstrip("\r\n")


def _json_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for line_number, line in _lines(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise _bad_line(path, line_number, f"invalid JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise _bad_line(path, line_number, "expected a JSON object")
        yield line_number, record


def _string_field(
    record: dict[str, Any], key: str, path: Path, line_number: int, required: bool = True
) -> str:
    value = record.get(key)
    if value is None and not required:
        return ""
    if isinstance(value, int) and not isinstance(value, bool) and key == "_id":
        return str(value)
    if not isinstance(value, str):
        raise _bad_line(path, line_number, f"field {key!r} must be a string, got {value!r}")
    return value


def _check_new(seen: dict[str, Any], key: str, path: Path, line_number: int) -> None:
    if key in seen:
        raise _bad_line(path, line_number, f"duplicate id {key!r}")


def _load_corpus(path: Path) -> dict[str, BeirDoc]:
    corpus: dict[str, BeirDoc] = {}
    for line_number, record in _json_records(path):
        doc_id = _string_field(record, "_id", path, line_number)
        _check_new(corpus, doc_id, path, line_number)
        title = _string_field(record, "title", path, line_number, required=False)
        text = _string_field(record, "text", path, line_number)
        corpus[doc_id] = BeirDoc(doc_id=doc_id, title=title, text=text)
    return corpus


def _load_queries(path: Path) -> dict[str, str]:
    queries: dict[str, str] = {}
    for line_number, record in _json_records(path):
        query_id = _string_field(record, "_id", path, line_number)
        _check_new(queries, query_id, path, line_number)
        queries[query_id] = _string_field(record, "text", path, line_number)
    return queries


def _load_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line_number, line in _lines(path):
        columns = line.split("\t")
        if tuple(columns[:2]) == _QRELS_HEADER:
            continue
        if len(columns) != 3:
            raise _bad_line(
                path, line_number, f"expected 3 tab-separated columns, got {len(columns)}"
            )
        query_id, doc_id, raw_score = columns
        try:
            score = int(raw_score)
        except ValueError:
            raise _bad_line(
                path, line_number, f"score must be an integer, got {raw_score!r}"
            ) from None
        judged = qrels.setdefault(query_id, {})
        if doc_id in judged:
            raise _bad_line(path, line_number, f"duplicate judgment for {query_id!r}/{doc_id!r}")
        judged[doc_id] = score
    return qrels


def load_beir(directory: Path, split: str = "test") -> BeirDataset:
    """Read `directory` in the BEIR layout; InvalidArgument names the file and line of a problem."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InvalidArgument(f"{directory}: not a directory; expected a BEIR data set directory")
    return BeirDataset(
        corpus=_load_corpus(directory / "corpus.jsonl"),
        queries=_load_queries(directory / "queries.jsonl"),
        qrels=_load_qrels(directory / "qrels" / f"{split}.tsv"),
    )


def subset(dataset: BeirDataset, prefix: str, distractors: int, seed: int = 0) -> BeirDataset:
    """The documents whose id starts with `prefix` plus `distractors` others drawn at random
    (seeded), and the queries whose judged documents are all kept: a quicker, easier run."""
    kept = [i for i in dataset.corpus if i.startswith(prefix)]
    others = [i for i in dataset.corpus if not i.startswith(prefix)]
    drawn = np.random.default_rng(seed).choice(len(others), min(distractors, len(others)), False)
    keep = set(kept) | {others[int(i)] for i in drawn}
    qrels = {q: r for q, r in dataset.qrels.items() if all(d in keep for d in r)}
    return BeirDataset(
        corpus={i: d for i, d in dataset.corpus.items() if i in keep},
        queries={q: t for q, t in dataset.queries.items() if q in qrels},
        qrels=qrels,
    )
