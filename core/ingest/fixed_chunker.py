"""Fixed-size chunking: windows of at most `max_tokens` tokens that overlap by `overlap_tokens`.

Structure-blind: a window is a span of whole words of the original text (its whitespace and line
breaks kept), the longest whose `count_tokens` stays within the budget. Each distinct word is
counted once; window ends are placed on the running sum of word counts and then checked with one
count of the window text. That sum is exact for tokenizers that never merge across whitespace
(WordPiece, word counts); for others a window that does not fit is searched for
(`largest_within`), so every window fits whatever the tokenizer. A text that fits whole is one
window after a single count. A word larger than the budget on its own is cut at characters into
windows of its own. The next window starts at the longest run of trailing words of the previous
one that fits in `overlap_tokens` (it always moves forward by at least one word).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate

from core.ingest.packing import CountTokens
from core.models import ChunkDraft

_WORD = re.compile(r"\S+")
# A fence opening a code block, or an indented code line after a blank line that is no list item.
_CODE_MARKER = re.compile(
    r"^ {0,3}(?:`{3,}|~{3,})"
    r"|(?:\A|\n[ \t]*\n)(?: {4}|\t)(?![ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$))[ \t]*\S",
    re.MULTILINE,
)

_INTERPOLATED_PROBES = 6  # then bisection, so a badly behaved count still ends in O(log n)

Span = tuple[int, int]
"""A [start, end) character range of a text."""


def chunk_fixed(
    text: str,
    max_tokens: int,
    overlap_tokens: int,
    count_tokens: CountTokens,
    section_path: tuple[str, ...] = (),
    page: int = 0,
) -> list[ChunkDraft]:
    """Overlapping windows of `text`, in order, each of at most `max_tokens` tokens.

    Every chunk gets `section_path` and `page`; `has_code` is set when the window holds a code
    fence or an indented code line; `token_estimate` is `count_tokens` of the chunk text.
    Whitespace-only text gives no chunk.
    """
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    drafts: list[ChunkDraft] = []
    for start, end in fixed_windows(normalised, max_tokens, overlap_tokens, count_tokens):
        window = normalised[start:end]
        drafts.append(
            ChunkDraft(
                text=window,
                section_path=section_path,
                has_code=has_code_marker(window),
                token_estimate=count_tokens(window),
                page=page,
            )
        )
    return drafts


def fixed_windows(
    text: str, max_tokens: int, overlap_tokens: int, count_tokens: CountTokens
) -> list[Span]:
    """Character spans of the windows of `text`; see the module docstring."""
    if not 0 <= overlap_tokens < max_tokens:
        raise ValueError(
            f"need 0 <= overlap_tokens < max_tokens; got {overlap_tokens}, {max_tokens}"
        )
    words = [match.span() for match in _WORD.finditer(text)]
    if not words:
        return []
    whole = (words[0][0], words[-1][1])
    if count_tokens(text[whole[0] : whole[1]]) <= max_tokens:
        return [whole]
    sizer = _Sizer(text, words, count_tokens)
    windows: list[Span] = []
    start, covered = 0, 0  # first word of the window; words before `covered` are in a window
    while start < len(words):
        end = sizer.largest_fit(start, max_tokens)
        if start < covered and end <= covered:  # the overlap leaves no room for a new word
            start = covered
            continue
        if end == start:  # one word larger than the budget
            windows.extend(_cut_word(text, words[start], max_tokens, count_tokens))
            start = covered = start + 1
            continue
        windows.append((words[start][0], words[end - 1][1]))
        covered = end
        if end == len(words):
            break
        start = sizer.overlap_start(start + 1, end, overlap_tokens)
    return windows


def has_code_marker(text: str) -> bool:
    """True when `text` holds a code fence line or an indented code line after a blank line."""
    return _CODE_MARKER.search(text) is not None


def largest_within(measure: Callable[[int], int], limit: int, budget: int, guess: int) -> int:
    """The largest n in [0, limit] with measure(n) <= budget; measure(0) is taken to be 0.

    `measure` should not decrease with n. The first probe is `guess`; after a probe aimed at the
    boundary its neighbour is checked (one step on, or back), which settles the usual case in two
    probes; otherwise the next aim interpolates between the closest fitting and failing probes
    (extrapolates while none failed). After a few probes it bisects (gallops while none failed).
    Whatever `measure` does, the result n is 0 or had measure(n) <= budget.
    """
    fits, fit_size = 0, 0
    fails, fail_size = limit + 1, -1  # -1: nothing has failed yet
    probe, probes, aimed = min(max(guess, 1), limit), 0, True
    while fails - fits > 1:
        size = measure(probe)
        probes += 1
        if size <= budget:
            fits, fit_size = probe, size
        else:
            fails, fail_size = probe, size
        if probes >= _INTERPOLATED_PROBES:
            estimate = (fits + fails) // 2 if fail_size >= 0 else 2 * fits
        elif aimed:
            estimate = fits + 1 if probe == fits else fails - 1
        elif fail_size < 0:
            estimate = fits + (budget - fit_size) * fits // max(fit_size, 1)
        else:
            estimate = fits + (budget - fit_size) * (fails - fits) // (fail_size - fit_size)
        aimed = not aimed and probes < _INTERPOLATED_PROBES
        probe = min(max(estimate, fits + 1), fails - 1)
    return fits


class _Sizer:
    """Token counts of runs of whole words (`words[i:j]`, spanning the text between them)."""

    def __init__(self, text: str, words: Sequence[Span], count_tokens: CountTokens) -> None:
        self._text = text
        self._words = words
        self._count = count_tokens
        counts: dict[str, int] = {}
        for first, end in words:
            word = text[first:end]
            if word not in counts:
                counts[word] = count_tokens(word)
        self._sums = [0, *accumulate(counts[text[first:end]] for first, end in words)]

    def size(self, first: int, end: int) -> int:
        """Tokens in words first..end-1 and the text between them; 0 for an empty run."""
        if end <= first:
            return 0
        return self._count(self._text[self._words[first][0] : self._words[end - 1][1]])

    def largest_fit(self, start: int, budget: int) -> int:
        """The largest `end` with size(start, end) <= budget (`start` when even one word is over)."""
        end = bisect_right(self._sums, self._sums[start] + budget) - 1
        if end == start or self.size(start, end) <= budget:
            return end
        return start + largest_within(
            lambda n: self.size(start, start + n), len(self._words) - start, budget, end - start
        )

    def overlap_start(self, lowest: int, end: int, budget: int) -> int:
        """The smallest start >= `lowest` with size(start, end) <= budget (`end` when none)."""
        first = bisect_left(self._sums, self._sums[end] - budget, lowest, end)
        if first == end or self.size(first, end) <= budget:
            return first
        return end - largest_within(lambda n: self.size(end - n, end), end - lowest, budget, 1)


def _cut_word(text: str, word: Span, max_tokens: int, count_tokens: CountTokens) -> list[Span]:
    """Spans of one over-long word, cut at characters into pieces of at most `max_tokens`."""
    pieces: list[Span] = []
    start, end = word
    while start < end:
        measure = _prefix_size(text, start, count_tokens)
        length = largest_within(measure, end - start, max_tokens, 2 * max_tokens)
        length = max(length, 1)  # a character the budget cannot hold is still taken
        pieces.append((start, start + length))
        start += length
    return pieces


def _prefix_size(text: str, start: int, count_tokens: CountTokens) -> Callable[[int], int]:
    """Token count of the first n characters of `text` from `start`."""
    return lambda n: count_tokens(text[start : start + n])
