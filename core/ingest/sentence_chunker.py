"""Sentence-aware chunking: whole sentences packed up to `max_tokens` within a section.

Paragraphs are cut into sentences with `packing.split_sentences`; a code block or a table counts
as one unit. Units are packed greedily, each chunk measured on its final text, so every chunk
holds at most `max_tokens` tokens. A sentence is never split unless it alone is larger than the
budget; such a unit (or an oversized code block or table) is cut by the fixed-size chunker, with
the same overlap, into chunks of its own. Chunks never cross a Markdown section (or a PDF page);
sentences of consecutive paragraphs may share a chunk, the paragraphs separated by a blank line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.ingest.fixed_chunker import chunk_fixed
from core.ingest.markdown_sections import parse_sections
from core.ingest.packing import Block, BlockKind, CountTokens, split_sentences
from core.models import ChunkDraft

_BLANK_LINES = re.compile(r"\n[ \t]*\n")
_PARAGRAPH_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class _Unit:
    """A sentence (with its trailing whitespace) or a whole code block or table."""

    text: str
    block: int  # index of the block it comes from; units of one block join without a separator
    is_code: bool = False


def chunk_sentences_markdown(
    text: str, max_tokens: int, overlap_tokens: int, count_tokens: CountTokens
) -> list[ChunkDraft]:
    """Chunks of a Markdown document, packed per section; `section_path` as for `chunk_markdown`."""
    return [
        chunk
        for section in parse_sections(text)
        for chunk in pack_sentences(
            section.blocks, max_tokens, overlap_tokens, count_tokens, section.path
        )
    ]


def chunk_sentences_text(
    text: str, max_tokens: int, overlap_tokens: int, count_tokens: CountTokens, page: int = 0
) -> list[ChunkDraft]:
    """Chunks of plain text (blank-line paragraphs), with an empty `section_path` and `page`."""
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    paragraphs = (part.strip() for part in _BLANK_LINES.split(normalised))
    blocks = [Block(paragraph) for paragraph in paragraphs if paragraph]
    chunks = pack_sentences(blocks, max_tokens, overlap_tokens, count_tokens)
    return [replace(chunk, page=page) for chunk in chunks] if page else chunks


def pack_sentences(
    blocks: Sequence[Block],
    max_tokens: int,
    overlap_tokens: int,
    count_tokens: CountTokens,
    section_path: tuple[str, ...] = (),
) -> list[ChunkDraft]:
    """Chunks of the sentences of `blocks`, each of at most `max_tokens` tokens.

    Units are counted one by one and packed while their sum fits; each chunk is then measured
    (see `_drafts`), so the bound holds for tokenizers that are not additive over whitespace too.
    """
    chunks: list[ChunkDraft] = []
    current: list[_Unit] = []
    total = 0
    for unit in _units(blocks):
        size = count_tokens(unit.text)
        if current and (size > max_tokens or total + size > max_tokens):
            chunks.extend(_drafts(current, max_tokens, count_tokens, section_path))
            current, total = [], 0
        if size > max_tokens:
            chunks.extend(
                replace(piece, has_code=piece.has_code or unit.is_code)
                for piece in chunk_fixed(
                    unit.text, max_tokens, overlap_tokens, count_tokens, section_path
                )
            )
            continue
        current.append(unit)
        total += size
    chunks.extend(_drafts(current, max_tokens, count_tokens, section_path))
    return chunks


def _units(blocks: Sequence[Block]) -> list[_Unit]:
    """The sentences of paragraphs and the whole code blocks and tables, in order."""
    units: list[_Unit] = []
    for index, block in enumerate(blocks):
        if block.kind is BlockKind.PARAGRAPH:
            units.extend(_Unit(s, index) for s in split_sentences(block.text) if s.strip())
        else:
            units.append(_Unit(block.text, index, is_code=block.is_code))
    return units


def _joined(units: Sequence[_Unit]) -> str:
    """Units of one block concatenated as written, blocks separated by a blank line."""
    parts: list[str] = []
    previous = -1
    for unit in units:
        if unit.block != previous and parts:
            parts[-1] = parts[-1].rstrip() + _PARAGRAPH_SEPARATOR
        parts.append(unit.text)
        previous = unit.block
    return "".join(parts).rstrip().lstrip("\n")


def _drafts(
    units: Sequence[_Unit],
    max_tokens: int,
    count_tokens: CountTokens,
    section_path: tuple[str, ...],
) -> list[ChunkDraft]:
    """The chunk of `units` (none when they hold no text).

    When the joined text counts more than `max_tokens` (a tokenizer that is not additive over
    whitespace), the units are regrouped, each group grown while its joined text fits.
    """
    text = _joined(units)
    if not text.strip():
        return []
    size = count_tokens(text)
    if size <= max_tokens or len(units) == 1:
        return [ChunkDraft(text, section_path, any(u.is_code for u in units), size)]
    groups: list[list[_Unit]] = [[]]
    for unit in units:
        if groups[-1] and count_tokens(_joined([*groups[-1], unit])) > max_tokens:
            groups.append([])
        groups[-1].append(unit)
    return [
        draft
        for group in groups
        for draft in _drafts(group, max_tokens, count_tokens, section_path)
    ]
