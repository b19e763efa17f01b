"""The chunking entry point: validate the budget and pick the chunker for a document's format."""

from __future__ import annotations

from core.errors import InvalidArgument
from core.ingest.markdown_chunker import chunk_markdown
from core.ingest.packing import CountTokens
from core.ingest.text_chunker import chunk_text
from core.models import ChunkDraft, Document, SourceType

MIN_MAX_TOKENS = 32
MAX_MAX_TOKENS = 1024


def chunk_document(
    document: Document, max_tokens: int, count_tokens: CountTokens
) -> list[ChunkDraft]:
    """Chunks of `document`, each of at most `max_tokens` tokens unless one code block or table is.

    Raises InvalidArgument when `max_tokens` is outside [32, 1024] or the format is not supported
    (HTML and PDF).
    """
    validate_max_tokens(max_tokens)
    if document.source_type is SourceType.MARKDOWN:
        return chunk_markdown(document.text, max_tokens, count_tokens)
    if document.source_type is SourceType.TEXT:
        return chunk_text(document.text, max_tokens, count_tokens)
    raise InvalidArgument.field(
        "documents.source_type",
        "HTML and PDF ingestion are not supported yet; send Markdown or plain text",
    )


def validate_max_tokens(max_tokens: int) -> None:
    """Raise InvalidArgument naming "chunking.max_tokens" unless it lies in [32, 1024]."""
    if isinstance(max_tokens, bool) or not MIN_MAX_TOKENS <= max_tokens <= MAX_MAX_TOKENS:
        raise InvalidArgument.field(
            "chunking.max_tokens",
            f"must be between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS} tokens, got {max_tokens}",
        )
