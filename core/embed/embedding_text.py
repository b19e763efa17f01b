"""The text a chunk is embedded as (the indexer writes it; the model check re-embeds it)."""

from __future__ import annotations

from collections.abc import Sequence


def embedding_text(section_path: Sequence[str], text: str) -> str:
    """The text a chunk is embedded as: its section path as a header line, then its body."""
    header = " > ".join(section_path)
    return f"{header}\n{text}" if header else text
