"""The extractive generator: answers with the context sentences most similar to the question.

It is the default when no language model is configured. Each passage's prose is split into
sentences (fenced code, headings, tables, lines that are only markup and fragments under
MIN_SENTENCE_CHARS characters are left out); sentences and query are embedded, and the best
`max_sentences` with cosine similarity >= `min_similarity` are streamed by descending score, each
followed by its passage's citation tag, after a notice saying the answer is extractive.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from core.answer.protocol import (
    ContextPassage,
    GenerationEvent,
    GenerationFinished,
    GenerationRequest,
    TextDelta,
)
from core.embed.protocol import Embedder
from core.errors import InvalidArgument

__all__ = [
    "DUPLICATE_SIMILARITY",
    "EXTRACTIVE_NOTICE",
    "MIN_SENTENCE_CHARS",
    "NO_ANSWER",
    "ExtractiveGenerator",
]

EXTRACTIVE_NOTICE = (
    "Extractive answer (no language model configured): "
    "the most relevant sentences from the sources, each with its citation."
)
NO_ANSWER = (
    "Extractive answer (no language model configured): "
    "no passage of the context answers the question."
)
MIN_SENTENCE_CHARS = 20
DUPLICATE_SIMILARITY = 0.95
"""Sentences whose embeddings are at least this similar to a chosen one are not repeated."""

_FENCE = re.compile(r"^\s*(?:```|~~~)")
_ITEM_START = re.compile(r"^\s*(?:>\s*)*(?:[-*+]|\d+[.)])\s+")
_LINE_PREFIX = re.compile(r"^\s*(?:>\s*)*(?:[-*+]\s+|\d+[.)]\s+)?")
_HTML_ONLY = re.compile(r"(?:<[^<>]+>\s*)+")
_LETTER = re.compile(r"[^\W\d_]")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"')\]])\s+")
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    tag: str


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


def _sentences(passages: Sequence[ContextPassage]) -> list[_Sentence]:
    """Candidate sentences in passage order then sentence order, exact repeats removed."""
    seen: set[str] = set()
    found: list[_Sentence] = []
    for passage in passages:
        for block in _prose_blocks(passage.text):
            for piece in _SENTENCE_BREAK.split(block):
                sentence = piece.strip()
                key = _NOT_WORD.sub(" ", sentence.casefold()).strip()
                if len(sentence) < MIN_SENTENCE_CHARS or not _LETTER.search(sentence):
                    continue
                if key not in seen:
                    seen.add(key)
                    found.append(_Sentence(sentence, passage.tag))
    return found


class ExtractiveGenerator:
    """A Generator that quotes the most relevant context sentences with their citations."""

    kind = "extractive"

    def __init__(
        self, embedder: Embedder, max_sentences: int = 4, min_similarity: float = 0.2
    ) -> None:
        if max_sentences < 1:
            raise InvalidArgument.field("max_sentences", f"must be >= 1, got {max_sentences}")
        if not -1.0 <= min_similarity <= 1.0:
            raise InvalidArgument.field(
                "min_similarity", f"must be within [-1, 1], got {min_similarity}"
            )
        self._embedder = embedder
        self._max_sentences = max_sentences
        self._min_similarity = min_similarity
        self.model = f"extractive:{embedder.model_name}"

    async def stream(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        """The notice, then one "<sentence> <tag>\\n" delta per chosen sentence, then the finish.

        `params.max_tokens` (None or < 1: no limit) bounds the sentence lines, counted in
        whitespace-separated words; a sentence that would pass it ends the answer with "length".
        """
        chosen = await self._choose(request.query, _sentences(request.passages))
        if not chosen:
            yield TextDelta(NO_ANSWER + "\n")
            yield GenerationFinished("stop", prompt_tokens=0, completion_tokens=1)
            return
        yield TextDelta(EXTRACTIVE_NOTICE + "\n\n")
        limit = request.params.max_tokens
        used = sent = 0
        for sentence in chosen:
            line = f"{sentence.text} {sentence.tag}\n"
            if limit is not None and limit > 0 and used + len(line.split()) > limit:
                yield GenerationFinished("length", prompt_tokens=0, completion_tokens=sent)
                return
            used += len(line.split())
            sent += 1
            yield TextDelta(line)
        yield GenerationFinished("stop", prompt_tokens=0, completion_tokens=sent)

    async def _choose(self, query: str, candidates: list[_Sentence]) -> list[_Sentence]:
        """The best candidates by descending similarity (ties: context order), near-repeats out."""
        if not candidates:
            return []
        texts = [candidate.text for candidate in candidates]
        vectors = await asyncio.to_thread(self._embedder.embed_documents, texts)
        query_vectors = await asyncio.to_thread(self._embedder.embed_queries, [query])
        scores = vectors @ query_vectors[0]
        order = sorted(range(len(candidates)), key=lambda i: (-round(float(scores[i]), 6), i))
        picked: list[int] = []
        for index in order:
            if len(picked) == self._max_sentences or float(scores[index]) < self._min_similarity:
                break
            if not _near_repeat(vectors, index, picked):
                picked.append(index)
        return [candidates[index] for index in picked]

    async def aclose(self) -> None:
        """Nothing to release: the embedder belongs to the caller."""


def _near_repeat(vectors: npt.NDArray[np.float32], index: int, picked: Sequence[int]) -> bool:
    """Whether sentence `index` is nearly identical to one already picked; vectors (n, dim)."""
    return any(float(vectors[index] @ vectors[other]) >= DUPLICATE_SIMILARITY for other in picked)
