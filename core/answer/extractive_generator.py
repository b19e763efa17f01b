"""The extractive generator: answers with the context sentences most similar to the question.

It is the default when no language model is configured. The passages' prose sentences
(`sentence_candidates`) are scored by cosine similarity to the question, and the best
`max_sentences` with similarity >= `min_similarity` are streamed by descending score, each
followed by its passage's citation tag, after a notice saying the answer is extractive.

How sentences are scored (`SentenceScoring`):
- `LEXICAL` (default): no model work at all (`lexical_choice`): BM25 against the question's
  keywords plus the retrieval's passage rank and a lead-sentence bonus, one sentence per
  document, only sentences sharing a keyword with the question (the role `min_similarity`
  plays for the embedding scorings). Issue #16: better first-sentence relevance
  than the embedding scorings on both FAQ sets, at a millisecond of Python per answer
  (benchmarks/results/extractive_scorer_sweep.md, extractive_throughput.md).
- `SHORTLIST`: a cheap lexical and positional ranking (`sentence_prefilter`) keeps the
  best `candidates`; they are embedded with the question in one `embed_queries` call, which the
  server's micro-batcher shares with concurrent queries. Sentence and question are embedded alike
  (a symmetric comparison; the same vectors for models without query or document prompts).
- `ALL`: every candidate sentence is embedded as a document, the question as a query (the
  original scorer; a context of ten passages costs the model ~100 sentences per answer).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from enum import Enum

import numpy as np
import numpy.typing as npt

from core.answer.lexical_choice import choose_lexically
from core.answer.protocol import (
    GenerationEvent,
    GenerationFinished,
    GenerationRequest,
    TextDelta,
)
from core.answer.sentence_candidates import (
    MIN_SENTENCE_CHARS,
    SentenceCandidate,
    sentence_candidates,
)
from core.answer.sentence_prefilter import shortlist
from core.embed.protocol import Embedder
from core.errors import InvalidArgument

__all__ = [
    "DEFAULT_CANDIDATES",
    "DUPLICATE_SIMILARITY",
    "EXTRACTIVE_NOTICE",
    "INLINE_CANDIDATES",
    "INLINE_CONTEXT_CHARS",
    "MIN_SENTENCE_CHARS",
    "NO_ANSWER",
    "ExtractiveGenerator",
    "SentenceScoring",
]

EXTRACTIVE_NOTICE = (
    "Extractive answer (no language model configured): "
    "the most relevant sentences from the sources, each with its citation."
)
NO_ANSWER = (
    "Extractive answer (no language model configured): "
    "no passage of the context answers the question."
)
DUPLICATE_SIMILARITY = 0.95
"""Sentences whose embeddings are at least this similar to a chosen one are not repeated."""
DEFAULT_CANDIDATES = 8
INLINE_CONTEXT_CHARS = 20_000
"""Larger contexts are split into sentences on a worker thread, not on the event loop (the
default 2,000-token context, ~8,000 characters, splits in about a millisecond)."""
INLINE_CANDIDATES = 400
"""More candidate sentences than this are scored lexically on a worker thread (~100 sentences
score in about a millisecond)."""


class SentenceScoring(str, Enum):
    """How the extractive generator scores candidate sentences (which ones it embeds)."""

    LEXICAL = "lexical"
    SHORTLIST = "shortlist"
    ALL = "all"


class ExtractiveGenerator:
    """A Generator that quotes the most relevant context sentences with their citations."""

    kind = "extractive"

    def __init__(
        self,
        embedder: Embedder,
        max_sentences: int = 4,
        min_similarity: float = 0.2,
        scoring: SentenceScoring = SentenceScoring.LEXICAL,
        candidates: int = DEFAULT_CANDIDATES,
    ) -> None:
        """`candidates`: sentences embedded per answer with `SHORTLIST` (>= `max_sentences`)."""
        if max_sentences < 1:
            raise InvalidArgument.field("max_sentences", f"must be >= 1, got {max_sentences}")
        if not -1.0 <= min_similarity <= 1.0:
            raise InvalidArgument.field(
                "min_similarity", f"must be within [-1, 1], got {min_similarity}"
            )
        if candidates < max_sentences:
            raise InvalidArgument.field(
                "candidates", f"must be >= max_sentences ({max_sentences}), got {candidates}"
            )
        self._embedder = embedder
        self._max_sentences = max_sentences
        self._min_similarity = min_similarity
        self._scoring = scoring
        self._candidates = candidates
        self.model = f"extractive:{embedder.model_name}"

    @property
    def scoring(self) -> SentenceScoring:
        """How candidate sentences are scored."""
        return self._scoring

    async def stream(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        """The notice, then one "<sentence> <tag>\\n" delta per chosen sentence, then the finish.

        `params.max_tokens` (None or < 1: no limit) bounds the sentence lines, counted in
        whitespace-separated words; a sentence that would pass it ends the answer with "length".
        """
        if sum(len(passage.text) for passage in request.passages) > INLINE_CONTEXT_CHARS:
            candidates = await asyncio.to_thread(sentence_candidates, request.passages)
        else:
            candidates = sentence_candidates(request.passages)
        if self._scoring is SentenceScoring.LEXICAL:
            chosen = await self._choose_lexically(request.query, candidates)
        elif self._scoring is SentenceScoring.ALL:
            chosen = await self._choose_from_all(request.query, candidates)
        else:
            chosen = await self._choose_from_shortlist(request.query, candidates)
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

    async def _choose_lexically(
        self, query: str, candidates: list[SentenceCandidate]
    ) -> list[SentenceCandidate]:
        """`choose_lexically`, on a worker thread for more than INLINE_CANDIDATES sentences."""
        if len(candidates) > INLINE_CANDIDATES:
            return await asyncio.to_thread(choose_lexically, query, candidates, self._max_sentences)
        return choose_lexically(query, candidates, self._max_sentences)

    async def _choose_from_shortlist(
        self, query: str, candidates: list[SentenceCandidate]
    ) -> list[SentenceCandidate]:
        """The shortlisted candidates ranked by similarity, question and sentences embedded in
        one call."""
        if not candidates:
            return []
        listed = [candidates[i] for i in sorted(shortlist(query, candidates, self._candidates))]
        texts = [query, *(candidate.text for candidate in listed)]
        vectors = await asyncio.to_thread(self._embedder.embed_queries, texts)
        return self._rank(listed, vectors[1:], vectors[0])

    async def _choose_from_all(
        self, query: str, candidates: list[SentenceCandidate]
    ) -> list[SentenceCandidate]:
        """Every candidate embedded as a document and ranked by similarity to the question."""
        if not candidates:
            return []
        texts = [candidate.text for candidate in candidates]
        vectors = await asyncio.to_thread(self._embedder.embed_documents, texts)
        query_vectors = await asyncio.to_thread(self._embedder.embed_queries, [query])
        return self._rank(candidates, vectors, query_vectors[0])

    def _rank(
        self,
        candidates: Sequence[SentenceCandidate],
        vectors: npt.NDArray[np.float32],
        query_vector: npt.NDArray[np.float32],
    ) -> list[SentenceCandidate]:
        """The best candidates by descending similarity (ties: the given order), near-repeats
        out; vectors (len(candidates), dim), query_vector (dim,)."""
        scores = vectors @ query_vector
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
