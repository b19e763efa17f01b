"""Pack blocks of a section into chunks of at most `max_tokens`, splitting oversized paragraphs.

Shared by every chunker: a chunker turns its input into `Block`s, this module decides where the
chunk boundaries fall. Paragraphs are packed greedily; a paragraph larger than the budget is split
at sentence boundaries (and a sentence larger than the budget at word boundaries). Code blocks and
tables are atomic: they are never split, and one larger than the budget becomes a chunk of its own.

Token counts are added up piece by piece (plus the cost of the separator), so `count_tokens` is
assumed additive over whitespace joins, which holds for word counts and WordPiece tokenizers.
`token_estimate` is always measured on the final chunk text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from core.models import ChunkDraft

CountTokens = Callable[[str], int]
"""Returns the number of tokens in a text (no special tokens)."""

BLOCK_SEPARATOR = "\n\n"

_T = TypeVar("_T")

# A sentence ends at . ! or ? (optionally followed by closing quotes or brackets) and whitespace,
# when the next sentence does not start with a lowercase letter; a list item starts a new piece.
_SENTENCE_BOUNDARY = re.compile(
    r"[.!?][\"')\]]*\s+(?=[^\sa-z])|\n(?=[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t])"
)
_WORD = re.compile(r"\S+\s*")


class BlockKind(Enum):
    """What a block is; only paragraphs may be split."""

    PARAGRAPH = "paragraph"
    CODE = "code"
    TABLE = "table"


@dataclass(frozen=True, slots=True)
class Block:
    """One structural unit of a section: a paragraph, a code block or a table."""

    text: str
    kind: BlockKind = BlockKind.PARAGRAPH

    @property
    def is_code(self) -> bool:
        """True for fenced and indented code blocks."""
        return self.kind is BlockKind.CODE


def pack_blocks(
    blocks: Sequence[Block],
    max_tokens: int,
    count_tokens: CountTokens,
    section_path: tuple[str, ...] = (),
) -> list[ChunkDraft]:
    """Chunks of consecutive blocks, each of at most `max_tokens` unless one atomic block is larger.

    Block texts are joined with a blank line. An empty `blocks` gives no chunk.
    """
    pieces = [piece for block in blocks for piece in _fit_block(block, max_tokens, count_tokens)]
    groups = _greedy_groups(pieces, _block_text, BLOCK_SEPARATOR, max_tokens, count_tokens)
    chunks: list[ChunkDraft] = []
    for group in groups:
        text = _chunk_text(group)
        if not text:
            continue
        chunks.append(
            ChunkDraft(
                text=text,
                section_path=section_path,
                has_code=any(block.is_code for block in group),
                token_estimate=count_tokens(text),
            )
        )
    return chunks


def split_paragraph(text: str, max_tokens: int, count_tokens: CountTokens) -> list[str]:
    """Pieces of one paragraph of at most `max_tokens` each, cut at sentences, then at words.

    Sentences are packed together; a sentence larger than the budget is cut at words into pieces
    of its own. The original whitespace inside a piece is kept; a single word larger than the
    budget is returned whole.
    """
    runs: list[list[str]] = []
    fitting: list[str] = []
    for sentence in split_sentences(text):
        if count_tokens(sentence) <= max_tokens:
            fitting.append(sentence)
            continue
        runs.extend(_greedy_groups(fitting, _same, "", max_tokens, count_tokens))
        fitting = []
        words = _WORD.findall(sentence)
        runs.extend(_greedy_groups(words, _same, "", max_tokens, count_tokens))
    runs.extend(_greedy_groups(fitting, _same, "", max_tokens, count_tokens))
    return [piece for piece in ("".join(run).strip() for run in runs) if piece]


def split_sentences(text: str) -> list[str]:
    """The sentences (and list items) of `text`, each with its trailing whitespace."""
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_BOUNDARY.finditer(text):
        sentences.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        sentences.append(text[start:])
    return sentences


def _fit_block(block: Block, max_tokens: int, count_tokens: CountTokens) -> list[Block]:
    """The block itself, or its pieces when it is a paragraph larger than the budget."""
    if block.kind is not BlockKind.PARAGRAPH or count_tokens(block.text) <= max_tokens:
        return [block]
    return [Block(piece) for piece in split_paragraph(block.text, max_tokens, count_tokens)]


def _greedy_groups(
    items: Sequence[_T],
    text_of: Callable[[_T], str],
    separator: str,
    max_tokens: int,
    count_tokens: CountTokens,
) -> list[list[_T]]:
    """Consecutive runs of `items` whose joined size stays within `max_tokens`.

    An item larger than the budget on its own forms a run of one.
    """
    separator_cost = count_tokens(separator) if separator else 0
    groups: list[list[_T]] = []
    current: list[_T] = []
    total = 0
    for item in items:
        size = count_tokens(text_of(item))
        if current and total + separator_cost + size > max_tokens:
            groups.append(current)
            current, total = [], 0
        total += size + (separator_cost if current else 0)
        current.append(item)
    if current:
        groups.append(current)
    return groups


def _chunk_text(blocks: Sequence[Block]) -> str:
    """Blocks joined by a blank line, blank edges removed (indented code keeps its indent)."""
    return BLOCK_SEPARATOR.join(block.text for block in blocks).rstrip().lstrip("\n")


def _block_text(block: Block) -> str:
    return block.text


def _same(text: str) -> str:
    return text
