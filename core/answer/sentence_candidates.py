"""The sentences an extractive answer may quote: the prose of the context passages.

Each passage's prose is split into sentences: fenced code, headings, tables, lines that are only
markup and fragments under MIN_SENTENCE_CHARS characters are left out; list items and paragraphs
are joined into single lines first. Exact repeats (ignoring case and punctuation) are kept once,
at their first place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.answer.protocol import ContextPassage

__all__ = ["MIN_SENTENCE_CHARS", "SentenceCandidate", "sentence_candidates"]

MIN_SENTENCE_CHARS = 20

_FENCE = re.compile(r"^\s*(?:```|~~~)")
_ITEM_START = re.compile(r"^\s*(?:>\s*)*(?:[-*+]|\d+[.)])\s+")
_LINE_PREFIX = re.compile(r"^\s*(?:>\s*)*(?:[-*+]\s+|\d+[.)]\s+)?")
_HTML_ONLY = re.compile(r"(?:<[^<>]+>\s*)+")
_LETTER = re.compile(r"[^\W\d_]")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"')\]])\s+")
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class SentenceCandidate:
    """One quotable sentence: its text, its passage's citation tag, the passage's place in the
    context (0 = first) and the sentence's place among that passage's candidates (0 = first)."""

    text: str
    tag: str
    passage: int
    position: int


def _is_markup(line: str) -> bool:
    """Headings, table rows, rules and HTML-only lines: structure, not sentences."""
    return (
        line.startswith(("#", "|"))
        or _HTML_ONLY.fullmatch(line) is not None
        or _LETTER.search(line) is None
    )


def _prose_blocks(text: str) -> list[str]:
    """Paragraphs and list items of `text` as single lines, code and markup left out."""
    blocks: list[str] = []
    current: list[str] = []
    in_fence = False

    def flush() -> None:
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            flush()
            continue
        stripped = line.strip()
        if in_fence or not stripped or _is_markup(stripped):
            flush()
            continue
        if _ITEM_START.match(line):
            flush()
        current.append(_LINE_PREFIX.sub("", line).strip())
    flush()
    return blocks


def sentence_candidates(passages: Sequence[ContextPassage]) -> list[SentenceCandidate]:
    """Candidate sentences in passage order then sentence order, exact repeats removed."""
    seen: set[str] = set()
    found: list[SentenceCandidate] = []
    for number, passage in enumerate(passages):
        position = 0
        for block in _prose_blocks(passage.text):
            for piece in _SENTENCE_BREAK.split(block):
                sentence = piece.strip()
                if len(sentence) < MIN_SENTENCE_CHARS or not _LETTER.search(sentence):
                    continue
                key = _NOT_WORD.sub(" ", sentence.casefold()).strip()
                if key not in seen:
                    seen.add(key)
                    found.append(SentenceCandidate(sentence, passage.tag, number, position))
                    position += 1
    return found
