"""Structure-aware chunking of Markdown: chunks never cross a heading, a code block or a table."""

from __future__ import annotations

from core.ingest.markdown_sections import parse_sections
from core.ingest.packing import CountTokens, pack_blocks
from core.models import ChunkDraft


def chunk_markdown(text: str, max_tokens: int, count_tokens: CountTokens) -> list[ChunkDraft]:
    """Chunks of a Markdown document, in document order.

    Each section (the body under a heading) is packed on its own; `section_path` holds the
    heading texts, outermost first, and heading lines are not part of the chunk text. Fenced and
    indented code blocks and pipe tables are never split; a chunk holding code has `has_code`.
    Paragraphs are packed up to `max_tokens` (as measured by `count_tokens`); a larger paragraph is
    split at sentences, then words. Sections without a body give no chunk.
    """
    return [
        chunk
        for section in parse_sections(text)
        for chunk in pack_blocks(section.blocks, max_tokens, count_tokens, section.path)
    ]
