"""Assemble ranked hits into one citation-tagged context text that never exceeds its budget.

Each hit becomes a block: its citation tag, then its section path joined with " > " on its own
line (when there is one), then the chunk text. Blocks are joined by a blank line.

1. Order: `order_hits` (the ranking, then among close scores shallow sections and new sources).
2. Each hit in that order, against the budget left:
   - a near duplicate of a chunk already in the context (`dedupe.py`) is left out;
   - the whole block goes in when it fits;
   - otherwise an extractive summary (`summary.py`, its sentences most similar to the query)
     goes in when at least one sentence fits;
   - otherwise, only while the context is still empty, the block is cut at a word boundary
     and marked with "…" (`truncation.py`), so the context is never empty when a tag and one
     word fit;
   - otherwise the hit is dropped (a later, smaller block may still fit).
Whole-block sizes are first summed as estimates; the finished text is measured in full and, if
a tokenizer that is not additive at block joins pushed it over, everything is rebuilt measuring
the full text at every step, so the budget is never exceeded.

With `stored_token_counts`, a token budget takes a chunk body's size from `chunk.token_estimate`
(counted by the same tokenizer at index time) instead of tokenizing the body again: only the
short block headers and the finished text are tokenized. The caller asserts the tokenizer is the
one that indexed the chunks; a wrong count is still caught by the full measure above.
With `additive_counts` as well (`count_tokens` provably sums across whitespace, see
core.embed.token_additivity), the summed size is exact and the finished text is not measured again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from core.context.budget import BudgetUnit, ContextBudget
from core.context.citations import ContextCitation, citation_for
from core.context.dedupe import Shingles, is_near_duplicate, shingles
from core.context.ordering import order_hits
from core.context.summary import SentenceScorer, extractive_summary, lexical_sentence_scores
from core.context.truncation import TRUNCATION_MARK, truncate_block
from core.models import Chunk, Hit

__all__ = [
    "BLOCK_SEPARATOR",
    "SECTION_SEPARATOR",
    "TRUNCATION_MARK",
    "AssembledContext",
    "BudgetUnit",
    "ContextBudget",
    "ContextCitation",
    "assemble_context",
]

BLOCK_SEPARATOR = "\n\n"
SECTION_SEPARATOR = " > "


@dataclass(frozen=True, slots=True)
class AssembledContext:
    """The context text handed to a generator, with what went into it and what did not.

    `included_row_ids` and `citations` are in context order. Every input hit is counted once:
    included whole, `summarised_hits`, `truncated_hits` (cut, at most the first block),
    `dropped_hits` (no room) or `duplicate_hits` (near duplicate of an included chunk).
    `budget_limit` is the room that applied, in `budget_unit` (reserves already deducted).
    `passages[i]` is what citation i's chunk put in the context after its tag and section
    line: the whole chunk text, its summary, or the cut text ending in the truncation mark.
    """

    text: str
    citations: tuple[ContextCitation, ...]
    token_estimate: int
    char_count: int
    included_row_ids: tuple[int, ...]
    truncated_hits: int
    summarised_hits: int = 0
    dropped_hits: int = 0
    duplicate_hits: int = 0
    budget_limit: int = 0
    budget_unit: BudgetUnit = BudgetUnit.TOKENS
    passages: tuple[str, ...] = ()

    @property
    def shortened_or_left_out(self) -> int:
        """Hits summarised, cut or dropped to respect the budget (duplicates not included)."""
        return self.summarised_hits + self.truncated_hits + self.dropped_hits


@dataclass(frozen=True, slots=True)
class _Meter:
    """How the budget is measured: `measure` in budget units, `overhead` = measure("")."""

    measure: Callable[[str], int]
    limit: int
    overhead: int
    exact: bool
    stored_counts: bool = False

    def fits(self, candidate: str) -> bool:
        return self.measure(candidate) <= self.limit

    def size(self, text: str, used: int, addition: str) -> int:
        """Size of `text + addition`: measured in full when exact, else `used` + the addition."""
        if self.exact or not text:
            return self.measure(text + addition)
        return used + self.measure(addition) - self.overhead

    def block_size(self, text: str, used: int, addition: str, size: int, chunk: Chunk) -> int:
        """Size of `text + addition + chunk.text`, where `size` is that of `text + addition`:
        the stored body count added when trusted (estimates only), else as `size()`."""
        if self.stored_counts and not self.exact and chunk.token_estimate > 0:
            return size + chunk.token_estimate
        return self.size(text, used, addition + chunk.text)


@dataclass(slots=True)
class _State:
    """The context built so far and the tallies (mutable, private to one assembly)."""

    text: str = ""
    used: int = 0
    included: list[Hit] = field(default_factory=list)
    passages: list[str] = field(default_factory=list)  # what each included hit placed
    seen: list[Shingles] = field(default_factory=list)
    summarised: int = 0
    truncated: int = 0
    dropped: int = 0
    duplicates: int = 0


def _block_header(hit: Hit) -> str:
    """Tag line plus the section line when the chunk has a section path."""
    header = citation_for(hit.chunk).tag + "\n"
    path = SECTION_SEPARATOR.join(part for part in hit.chunk.section_path if part)
    return header + path + "\n" if path else header


class _Fit(Enum):
    WHOLE = "whole"
    SUMMARISED = "summarised"
    TRUNCATED = "truncated"


@dataclass(frozen=True, slots=True)
class _Placed:
    """How a hit went in, the context text with it, that text's size and the hit's passage."""

    how: _Fit
    text: str
    size: int
    passage: str


def _fit_block(
    state: _State, hit: Hit, meter: _Meter, query: str, scorer: SentenceScorer
) -> _Placed | None:
    """`hit` added to `state`: whole, summarised or cut; None when there is no room."""
    prefix = state.text + BLOCK_SEPARATOR if state.text else ""
    header = _block_header(hit)
    body = hit.chunk.text
    addition = prefix[len(state.text) :] + header
    header_size = meter.size(state.text, state.used, addition)
    if header_size > meter.limit:
        return None
    size = meter.block_size(state.text, state.used, addition, header_size, hit.chunk)
    if size <= meter.limit:
        return _Placed(_Fit.WHOLE, prefix + header + body, size, body)
    summary = extractive_summary(
        body,
        query,
        scorer,
        room=meter.limit - header_size,
        text_cost=size - header_size,
        fits=lambda candidate: (
            meter.size(state.text, state.used, addition + candidate) <= meter.limit
        ),
    )
    if summary is not None:
        size = meter.size(state.text, state.used, addition + summary)
        return _Placed(_Fit.SUMMARISED, prefix + header + summary, size, summary)
    if not state.text:
        cut = truncate_block(header, body, meter.fits)
        if cut is not None:
            return _Placed(_Fit.TRUNCATED, cut, meter.measure(cut), cut[len(header) :])
    return None


def _place(state: _State, hit: Hit, meter: _Meter, query: str, scorer: SentenceScorer) -> None:
    """Add `hit` to `state` whole, summarised or cut, or count it as a duplicate or dropped."""
    fingerprint = shingles(hit.chunk.text)
    if is_near_duplicate(fingerprint, state.seen):
        state.duplicates += 1
        return
    placed = _fit_block(state, hit, meter, query, scorer)
    if placed is None:
        state.dropped += 1
        return
    state.text, state.used = placed.text, placed.size
    state.summarised += placed.how is _Fit.SUMMARISED
    state.truncated += placed.how is _Fit.TRUNCATED
    state.included.append(hit)
    state.passages.append(placed.passage)
    state.seen.append(fingerprint)


def _assemble(hits: Sequence[Hit], meter: _Meter, query: str, scorer: SentenceScorer) -> _State:
    state = _State()
    for hit in hits:
        _place(state, hit, meter, query, scorer)
    return state


def assemble_context(
    hits: Sequence[Hit],
    budget: ContextBudget,
    count_tokens: Callable[[str], int],
    *,
    query: str = "",
    scorer: SentenceScorer = lexical_sentence_scores,
    stored_token_counts: bool = False,
    additive_counts: bool = False,
) -> AssembledContext:
    """Order, deduplicate and fit `hits` into `budget` (see the module docstring).

    `count_tokens` measures a text in the budget's tokens; it also gives `token_estimate` when
    the budget is in characters. `query` and `scorer` pick the sentences of summaries; without
    a query, summaries keep the leading sentences. `stored_token_counts`: `count_tokens` is the
    tokenizer that set the chunks' `token_estimate`, so body sizes are read, not counted;
    `additive_counts`: `count_tokens` sums across whitespace, so the summed size is trusted.
    Same inputs, byte-identical output.
    """
    tokens_budget = budget.unit is BudgetUnit.TOKENS
    measure: Callable[[str], int] = count_tokens if tokens_budget else len
    ordered = order_hits(hits)
    meter = _Meter(
        measure=measure,
        limit=budget.limit,
        overhead=measure(""),
        exact=False,
        stored_counts=stored_token_counts and tokens_budget,
    )
    state = _assemble(ordered, meter, query, scorer)
    if not state.text:
        size = 0
    elif additive_counts and tokens_budget:
        size = state.used
    else:
        size = measure(state.text)
    if size > budget.limit:
        exact = _Meter(measure=measure, limit=budget.limit, overhead=meter.overhead, exact=True)
        state = _assemble(ordered, exact, query, scorer)
        size = state.used  # measured in full at every step
    if not state.text:
        tokens = 0
    else:
        tokens = size if budget.unit is BudgetUnit.TOKENS else count_tokens(state.text)
    return AssembledContext(
        text=state.text,
        citations=tuple(citation_for(hit.chunk) for hit in state.included),
        token_estimate=tokens,
        char_count=len(state.text),
        included_row_ids=tuple(hit.chunk.row_id for hit in state.included),
        truncated_hits=state.truncated,
        summarised_hits=state.summarised,
        dropped_hits=state.dropped,
        duplicate_hits=state.duplicates,
        budget_limit=budget.limit,
        budget_unit=budget.unit,
        passages=tuple(state.passages),
    )
