"""The recipe the FAQ labelled sets share (python-faq, perl-faq, r-faq), written in BEIR layout.

Every documentation section whose body has at least `MIN_BODY` characters is a corpus document
(`title` its heading, `text` its body). A FAQ section whose heading ends in "?" is also a query:
the heading is the query text, the section is its one relevant document and its `title` is left
empty, so the answer is found by its body alone. A question asked twice is kept once (the first).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MIN_BODY = 80


@dataclass(frozen=True, slots=True)
class FaqSection:
    """One section of the documentation, as a builder parsed it."""

    doc_id: str
    heading: str
    body: str
    in_faq: bool
    """True for a section of the FAQ pages (a question when its heading ends in "?")."""


def write_faq_set(sections: Iterable[FaqSection], out: Path) -> dict[str, int]:
    """`out`/corpus.jsonl, queries.jsonl and qrels/test.tsv from `sections`, in their order;
    returns the document and query counts."""
    corpus: list[dict[str, str]] = []
    queries: list[dict[str, str]] = []
    qrels: list[tuple[str, str]] = []
    seen_questions: set[str] = set()
    for section in sections:
        if len(section.body) < MIN_BODY:
            continue
        question = section.in_faq and section.heading.endswith("?")
        corpus.append(
            {
                "_id": section.doc_id,
                "title": "" if question else section.heading,
                "text": section.body,
            }
        )
        if question and section.heading not in seen_questions:
            seen_questions.add(section.heading)
            query_id = f"q{len(queries) + 1}"
            queries.append({"_id": query_id, "text": section.heading})
            qrels.append((query_id, section.doc_id))
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    _write_jsonl(out / "corpus.jsonl", corpus)
    _write_jsonl(out / "queries.jsonl", queries)
    with (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for query_id, doc_id in qrels:
            handle.write(f"{query_id}\t{doc_id}\t1\n")
    return {"documents": len(corpus), "queries": len(queries)}


def _write_jsonl(path: Path, records: Iterable[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
