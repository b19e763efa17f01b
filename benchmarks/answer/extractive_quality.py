"""How good an extractive answer is, judged against a labelled set's relevant document.

An answer line is "<sentence> <citation tag>"; its document is the tag's. Over the questions
whose relevant document is among the context's citations (otherwise no sentence could come from
it), `top_relevant` is the share whose first sentence comes from the relevant document and
`any_relevant` the share with any sentence from it; `no_answer` is the share answered with the
no-answer notice. Citation validity comes from the server's own check (AnswerSummary:
`invalid_citations`, `faithfulness`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.answer.extractive_generator import EXTRACTIVE_NOTICE, NO_ANSWER
from core.context.citations import parse_citation_tags


@dataclass(frozen=True, slots=True)
class JudgedAnswer:
    """One answer as the quality measure sees it."""

    query_id: str
    sentences: tuple[tuple[str, str], ...]  # (sentence line, document id) in answer order
    context_documents: frozenset[str]
    relevant: frozenset[str]
    invalid_citations: int
    faithfulness: float
    no_answer: bool


def judge(
    query_id: str,
    text: str,
    context_documents: set[str],
    relevant: set[str],
    invalid_citations: int,
    faithfulness: float,
) -> JudgedAnswer:
    """The answer `text` split into its cited sentences, with what quality needs to know."""
    sentences: list[tuple[str, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line in {EXTRACTIVE_NOTICE, NO_ANSWER}:
            continue
        tags = parse_citation_tags(line)
        sentences.append((line, tags[-1][0] if tags else ""))
    return JudgedAnswer(
        query_id,
        tuple(sentences),
        frozenset(context_documents),
        frozenset(relevant),
        invalid_citations,
        faithfulness,
        text.strip() == NO_ANSWER,
    )


@dataclass(slots=True)
class Quality:
    """Aggregates over one set's answers."""

    answers: int = 0
    answerable: int = 0  # relevant document in the context
    top_relevant: int = 0
    any_relevant: int = 0
    no_answer: int = 0
    invalid_citations: int = 0
    faithfulness_sum: float = 0.0
    top_sentences: dict[str, str] = field(default_factory=dict)

    def add(self, answer: JudgedAnswer) -> None:
        """Count one answer."""
        self.answers += 1
        self.no_answer += answer.no_answer
        self.invalid_citations += answer.invalid_citations
        self.faithfulness_sum += answer.faithfulness
        if answer.sentences:
            self.top_sentences[answer.query_id] = answer.sentences[0][0]
        if not answer.relevant & answer.context_documents:
            return
        self.answerable += 1
        documents = [document for _, document in answer.sentences]
        self.top_relevant += bool(documents) and documents[0] in answer.relevant
        self.any_relevant += any(document in answer.relevant for document in documents)

    def summary(self) -> dict[str, float]:
        """The figures a results table shows."""
        answerable = max(self.answerable, 1)
        answers = max(self.answers, 1)
        return {
            "answers": self.answers,
            "answerable": self.answerable,
            "top_relevant": self.top_relevant / answerable,
            "any_relevant": self.any_relevant / answerable,
            "no_answer": self.no_answer / answers,
            "invalid_citations": self.invalid_citations,
            "faithfulness_mean": self.faithfulness_sum / answers,
        }


def agreement(a: Quality, b: Quality) -> float:
    """Share of questions both answered whose first sentence is the same line."""
    shared = a.top_sentences.keys() & b.top_sentences.keys()
    same = sum(a.top_sentences[q] == b.top_sentences[q] for q in shared)
    return same / len(shared) if shared else 0.0
