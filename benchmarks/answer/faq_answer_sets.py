"""The labelled FAQ sets the extractive benchmark answers from, indexed once into a server data dir.

Each set is the FAQ pages of a BEIR data set (python-faq: ids under `faq/`; perl-faq: `perlfaq`)
plus `distractors` other sections drawn at random (seed 0), in a collection of its own. The data
dir lives outside the repository (default `extractive/answer-data` of the benchmark cache,
$GW_BENCH_CACHE, else ~/.cache/groundwire-bench) and is reused by later runs: a collection
already holding every document is not indexed again. The sets' directories are the ones
`benchmarks/embed/question_sets.py` knows.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from benchmarks.embed.question_sets import SETS as LABELLED_SETS
from benchmarks.ghz.faq_index import DEFAULT_CACHE
from core.eval.beir import BeirDataset, load_beir, subset

CACHE = DEFAULT_CACHE / "extractive"
DEFAULT_DATA = CACHE / "answer-data"
"""The indexed data dir the extractive benchmarks share (`--data-dir`)."""
SENTENCE_CACHE = CACHE / "sentences.sqlite"
"""Sentence vectors of the in-process sweeps (`--cache`)."""


@dataclass(frozen=True, slots=True)
class AnswerSet:
    """One labelled set: collection name, questions (id -> text), relevant documents per question."""

    name: str
    dataset: BeirDataset

    def questions(self, limit: int) -> list[tuple[str, str]]:
        """(query id, question) in file order, at most `limit` (0: all)."""
        items = list(self.dataset.queries.items())
        return items[:limit] if limit > 0 else items

    def relevant(self, query_id: str) -> set[str]:
        """The documents judged relevant to `query_id`."""
        return {doc for doc, grade in self.dataset.qrels[query_id].items() if grade > 0}


SETS = {
    "pyfaq": (LABELLED_SETS["python-faq"], "faq/"),
    "perlfaq": (LABELLED_SETS["perl-faq"], "perlfaq"),
}


def load_sets(distractors: int) -> list[AnswerSet]:
    """Every available set, subset to its FAQ pages plus `distractors` random sections."""
    found: list[AnswerSet] = []
    for name, (directory, prefix) in SETS.items():
        if not directory.is_dir():
            print(f"skipping {name}: {directory} is missing", file=sys.stderr)
            continue
        found.append(AnswerSet(name, subset(load_beir(directory), prefix, distractors)))
    return found


def ensure_indexed(target: str, answer_sets: list[AnswerSet]) -> None:
    """Create each set's collection and upsert its documents unless all are already there."""
    from groundwire import Client

    with Client(target, timeout=3600) as client:
        for answer_set in answer_sets:
            corpus = answer_set.dataset.corpus
            client.create_collection(answer_set.name, exist_ok=True)
            stats = client.stats(collection=answer_set.name)
            if stats.collection.document_count >= len(corpus):
                continue
            print(f"indexing {answer_set.name}: {len(corpus)} documents", flush=True)
            client.upsert_documents(
                (
                    {"document_id": doc.doc_id, "text": doc.text, "title": doc.title}
                    for doc in corpus.values()
                ),
                collection=answer_set.name,
                batch_size=32,
            )
