"""Validate an answer's citation tags against its context and measure how much of it is cited.

Sentence rule for faithfulness: the answer is split after ".", "!" or "?" followed by whitespace,
and at line breaks (never inside a citation tag). Citation tags that directly follow a sentence's
final punctuation belong to that sentence ("Foo. [DOC:a | CHUNK:a#0] Bar." cites "Foo."). Pieces
without any letter (list numbers, stray tags, punctuation) are not sentences; their tags go to
the previous sentence (the next one at the start). Markdown headings, code-fence lines and a
leading extractive notice line are not content and are not counted. Faithfulness is the share of
content sentences carrying at least one valid tag; 0.0 when there are none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.answer.extractive_generator import EXTRACTIVE_NOTICE
from core.context.citations import ContextCitation, parse_citation_tags

__all__ = ["CitationReport", "check_citations", "split_sentences"]

_LOOSE_TAG = re.compile(r"\[\s*DOC:[^\[\]]*\]")
_TRAILING_TAGS = re.compile(r"(?:[ \t]*\[\s*DOC:[^\[\]]*\])+")
_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)|\n")
_NOT_CONTENT_LINE = re.compile(r"^\s*(?:#{1,6}\s|```|~~~)")
_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True, slots=True)
class CitationReport:
    """What an answer cited: valid citations (first use order, no repeats), the count of tag
    occurrences naming no context chunk, and the cited share of its `sentences`."""

    valid: tuple[ContextCitation, ...]
    invalid_count: int
    faithfulness: float
    sentences: int


def _pieces(text: str) -> list[str]:
    """`text` cut at sentence boundaries outside tags, each cut moved past trailing tags."""
    tag_spans = [match.span() for match in _LOOSE_TAG.finditer(text)]
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        end = match.end()
        if end <= start or any(low < end <= high for low, high in tag_spans):
            continue
        trailing = _TRAILING_TAGS.match(text, end)
        if trailing is not None:
            end = trailing.end()
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return pieces


def split_sentences(answer: str) -> list[str]:
    """The content sentences of `answer` under the module's sentence rule, tags attached."""
    lines = answer.strip().splitlines()
    if lines and lines[0].strip() == EXTRACTIVE_NOTICE:
        lines = lines[1:]
    text = "\n".join(line for line in lines if not _NOT_CONTENT_LINE.match(line))
    sentences: list[str] = []
    orphan_tags = ""
    for piece in _pieces(text):
        piece = piece.strip()
        if _LETTER.search(_LOOSE_TAG.sub("", piece)):
            sentences.append(f"{orphan_tags} {piece}".strip() if orphan_tags else piece)
            orphan_tags = ""
        elif tags := " ".join(_LOOSE_TAG.findall(piece)):
            if sentences:
                sentences[-1] = f"{sentences[-1]} {tags}"
            else:
                orphan_tags = f"{orphan_tags} {tags}".strip()
    return sentences


def check_citations(answer: str, context: Sequence[ContextCitation]) -> CitationReport:
    """Valid citations of `answer`, its fabricated-tag count and its faithfulness.

    A tag is valid iff its (document_id, chunk_id) pair belongs to a citation of `context`.
    """
    by_key: dict[tuple[str, str], ContextCitation] = {}
    for citation in context:
        by_key.setdefault((citation.document_id, citation.chunk_id), citation)
    valid: dict[tuple[str, str], ContextCitation] = {}
    invalid_count = 0
    for key in parse_citation_tags(answer):
        if key in by_key:
            valid.setdefault(key, by_key[key])
        else:
            invalid_count += 1
    sentences = split_sentences(answer)
    cited = sum(
        1 for sentence in sentences if any(key in by_key for key in parse_citation_tags(sentence))
    )
    return CitationReport(
        valid=tuple(valid.values()),
        invalid_count=invalid_count,
        faithfulness=cited / len(sentences) if sentences else 0.0,
        sentences=len(sentences),
    )
