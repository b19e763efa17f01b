"""Chunking of plain text: blank-line separated paragraphs packed up to a token budget."""

from __future__ import annotations

import re

from core.ingest.packing import Block, CountTokens, pack_blocks
from core.models import ChunkDraft

_BLANK_LINES = re.compile(r"\n[ \t]*\n")


def chunk_text(text: str, max_tokens: int, count_tokens: CountTokens) -> list[ChunkDraft]:
    """Chunks of a plain-text document, in document order, with an empty `section_path`.

    Paragraphs are packed up to `max_tokens` (as measured by `count_tokens`); a larger paragraph is
    split at sentences, then words. Whitespace-only text gives no chunk.
    """
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    paragraphs = (part.strip() for part in _BLANK_LINES.split(normalised))
    blocks = [Block(paragraph) for paragraph in paragraphs if paragraph]
    return pack_blocks(blocks, max_tokens, count_tokens)
