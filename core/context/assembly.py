"""Assemble ranked hits into one citation-tagged context text that respects a budget.

Each hit becomes a block: its citation tag, then its section path joined with " > " on its own
line (when there is one), then the chunk text. Blocks are joined with a blank line. Blocks are
added whole, in the given order, while the total stays within the budget; a block that does not
fit is cut at a word boundary (at a sentence end when that keeps most of the text) if enough room
is left, and skipped otherwise (a later, smaller block may still fit whole). Sizes of whole
blocks are summed as estimates; the finished text is measured in full and, if a tokenizer that is
not additive at block joins pushed it over, rebuilt measuring every step, so the budget is never
exceeded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.context.citations import ContextCitation, citation_for
from core.errors import InvalidArgument
from core.models import Hit

__all__ = [
    "BLOCK_SEPARATOR",
    "MIN_TRUNCATION_CHARS",
    "MIN_TRUNCATION_TOKENS",
    "SECTION_SEPARATOR",
    "TRUNCATION_MARK",
    "AssembledContext",
    "ContextBudget",
    "ContextCitation",
    "assemble_context",
]

BLOCK_SEPARATOR = "\n\n"
SECTION_SEPARATOR = " > "
TRUNCATION_MARK = "…"
MIN_TRUNCATION_TOKENS = 50
MIN_TRUNCATION_CHARS = 200

_WORD_END = re.compile(r"\S(?=\s|$)")
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n\s*\n")


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """Upper bound on the assembled context: tokens or characters, exactly one of them.

    Only structure is checked here (one unit, a positive integer); the largest budget a caller
    may ask for is server policy.
    """

    max_tokens: int | None = None
    max_chars: int | None = None

    def __post_init__(self) -> None:
        if (self.max_tokens is None) == (self.max_chars is None):
            raise InvalidArgument.field("budget", "set exactly one of max_tokens or max_chars")
        if self.max_tokens is not None:
            _check_positive("budget.max_tokens", self.max_tokens)
        if self.max_chars is not None:
            _check_positive("budget.max_chars", self.max_chars)

    @property
    def limit(self) -> int:
        """The budget in its own unit."""
        return self.max_tokens if self.max_tokens is not None else self.max_chars or 0


def _check_positive(field: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument.field(field, f"must be an integer >= 1, got {value!r}")


@dataclass(frozen=True, slots=True)
class AssembledContext:
    """The context text handed to a generator, with what went into it."""

    text: str
    citations: tuple[ContextCitation, ...]
    token_estimate: int
    char_count: int
    included_row_ids: tuple[int, ...]
    truncated_hits: int


def _block_header(hit: Hit) -> str:
    """Tag line plus the section line when the chunk has a section path."""
    header = citation_for(hit.chunk).tag + "\n"
    path = SECTION_SEPARATOR.join(part for part in hit.chunk.section_path if part)
    return header + path + "\n" if path else header


def _truncate(prefix: str, header: str, body: str, fits: Callable[[str], bool]) -> str | None:
    """`prefix + header + body` cut after a word (binary search) so that it fits; None if none does.

    When the cut body contains a sentence end in its second half, the cut moves back to it.
    """
    ends = [match.end() for match in _WORD_END.finditer(body)]
    low, high, best = 0, len(ends) - 1, -1
    while low <= high:
        middle = (low + high) // 2
        if fits(prefix + header + body[: ends[middle]] + TRUNCATION_MARK):
            best, low = middle, middle + 1
        else:
            high = middle - 1
    if best < 0:
        return None
    cut = body[: ends[best]]
    sentence_ends = [match.end() for match in _SENTENCE_END.finditer(cut + " ")]
    if sentence_ends and sentence_ends[-1] >= len(cut) // 2:
        candidate = prefix + header + cut[: sentence_ends[-1]].rstrip()
        if fits(candidate):
            return candidate
    return prefix + header + cut + TRUNCATION_MARK


@dataclass(frozen=True, slots=True)
class _Meter:
    """How the budget is measured: `measure` in budget units, `overhead` = measure("")."""

    measure: Callable[[str], int]
    limit: int
    min_room: int
    overhead: int

    def fits(self, candidate: str) -> bool:
        return self.measure(candidate) <= self.limit


def _add_block(
    text: str, used: int, hit: Hit, meter: _Meter, exact: bool
) -> tuple[str, int, bool] | None:
    """(new text, its size, whether the block went in whole), or None when the hit is left out.

    `used` is the size of `text`. Sizes are additive estimates (used + new block, less the
    counter's fixed overhead) unless `exact`, when every whole-block text is measured in full.
    A cut block is always measured in full.
    """
    prefix = text + BLOCK_SEPARATOR if text else ""
    header = _block_header(hit)
    whole = prefix + header + hit.chunk.text
    joined = meter.overhead if text else 0
    estimate = used + meter.measure(whole[len(text) :]) - joined
    if estimate <= meter.limit:
        size = meter.measure(whole) if exact else estimate
        if size <= meter.limit:
            return whole, size, True
    room = meter.limit - (used + meter.measure(BLOCK_SEPARATOR) - joined if text else 0)
    if room < meter.min_room:
        return None
    cut = _truncate(prefix, header, hit.chunk.text, meter.fits)
    return None if cut is None else (cut, meter.measure(cut), cut == whole)


def _assemble(hits: Sequence[Hit], meter: _Meter, exact: bool) -> tuple[str, list[Hit], int]:
    """(context text, hits included, hits cut or left out)."""
    text, used, truncated = "", 0, 0
    included: list[Hit] = []
    for hit in hits:
        added = _add_block(text, used, hit, meter, exact)
        if added is None or not added[2]:
            truncated += 1
        if added is not None:
            text, used, _ = added
            included.append(hit)
    return text, included, truncated


def assemble_context(
    hits: Sequence[Hit], budget: ContextBudget, count_tokens: Callable[[str], int]
) -> AssembledContext:
    """Greedy, order-keeping assembly of `hits` within `budget` (see the module docstring).

    `count_tokens` measures a text in the budget's tokens; it is also used for `token_estimate`
    when the budget is in characters. `truncated_hits` counts hits cut short or left out.
    A first pass trusts additive size estimates; if the finished text then measures over the
    budget (a counter that is not additive at block joins), it is rebuilt measuring every step.
    """
    in_tokens = budget.max_tokens is not None
    measure: Callable[[str], int] = count_tokens if in_tokens else len
    meter = _Meter(
        measure=measure,
        limit=budget.limit,
        min_room=MIN_TRUNCATION_TOKENS if in_tokens else MIN_TRUNCATION_CHARS,
        overhead=measure(""),
    )
    text, included, truncated = _assemble(hits, meter, exact=False)
    if text and not meter.fits(text):
        text, included, truncated = _assemble(hits, meter, exact=True)
    return AssembledContext(
        text=text,
        citations=tuple(citation_for(hit.chunk) for hit in included),
        token_estimate=count_tokens(text) if text else 0,
        char_count=len(text),
        included_row_ids=tuple(hit.chunk.row_id for hit in included),
        truncated_hits=truncated,
    )
