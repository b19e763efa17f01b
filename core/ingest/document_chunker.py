"""Chunk a document of any supported format and attach the risk flags of every chunk.

The `ChunkingSpec` picks the chunker: structure-aware (Markdown and plain text through
`chunk_document`), fixed-size windows, or sentences. HTML is converted to Markdown first (so its
headings give section paths; hidden text is not indexed); PDF pages are read from the raw bytes,
chunked one page at a time, and keep their page number. Each chunk gets its own flags (see
`risk_rules.assess_chunk`, applied to the section headings and the chunk text) merged with the
document's (`assess_document`), whichever chunker made it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.errors import FieldViolation, InvalidArgument
from core.ingest.chunking import chunk_document
from core.ingest.chunking_spec import ChunkerKind, ChunkingSpec
from core.ingest.fixed_chunker import chunk_fixed
from core.ingest.html_parser import html_to_markdown
from core.ingest.markdown_chunker import chunk_markdown
from core.ingest.packing import CountTokens
from core.ingest.pdf_parser import chunk_pages, pdf_pages
from core.ingest.risk_rules import assess_chunk, assess_document, with_level
from core.ingest.sentence_chunker import chunk_sentences_markdown, chunk_sentences_text
from core.models import ChunkDraft, Document, RiskLevel, SourceType


@dataclass(frozen=True, slots=True)
class ChunkedDraft:
    """A chunk draft with the risk flags computed at ingest and their highest level."""

    draft: ChunkDraft
    risk_flags: tuple[str, ...] = ()
    risk_level: RiskLevel = RiskLevel.NONE


def chunk_any(
    document: Document, content: bytes, chunking: ChunkingSpec, count_tokens: CountTokens
) -> list[ChunkedDraft]:
    """Flagged chunks of `document`, in document order, made by the chunker `chunking` names.

    `content` holds the raw bytes of a PDF (and is otherwise used only when `document.text` is
    empty, decoded as UTF-8). Raises InvalidArgument naming the document when its bytes are not
    a readable PDF or not UTF-8 text.
    """
    try:
        drafts, raw_text = _drafts(document, content, chunking, count_tokens)
    except InvalidArgument as exc:
        raise _naming(document, exc) from exc
    document_flags, _ = assess_document(raw_text, document.source_type)
    return [_flagged(draft, document_flags, chunking.max_tokens) for draft in drafts]


def _drafts(
    document: Document, content: bytes, chunking: ChunkingSpec, count_tokens: CountTokens
) -> tuple[list[ChunkDraft], str]:
    """The chunk drafts and the text the document-level rules read."""
    max_tokens = chunking.max_tokens
    if document.source_type is SourceType.PDF:
        pages = pdf_pages(content)
        if chunking.kind is ChunkerKind.STRUCTURE:
            return chunk_pages(pages, max_tokens, count_tokens), "\n\n".join(pages)
        drafts = [
            draft
            for number, page in enumerate(pages, start=1)
            for draft in _unstructured(page, False, chunking, count_tokens, number)
        ]
        return drafts, "\n\n".join(pages)
    text = document.text or _decoded(content)
    is_html = document.source_type is SourceType.HTML
    if chunking.kind is ChunkerKind.STRUCTURE:
        if is_html:
            return chunk_markdown(html_to_markdown(text), max_tokens, count_tokens), text
        return chunk_document(replace(document, text=text), max_tokens, count_tokens), text
    body = html_to_markdown(text) if is_html else text
    is_markdown = is_html or document.source_type is SourceType.MARKDOWN
    return _unstructured(body, is_markdown, chunking, count_tokens), text


def _unstructured(
    text: str, is_markdown: bool, chunking: ChunkingSpec, count_tokens: CountTokens, page: int = 0
) -> list[ChunkDraft]:
    """Chunks of one text (a whole document or one PDF page) by the fixed or sentence chunker."""
    max_tokens, overlap = chunking.max_tokens, chunking.overlap_tokens
    if chunking.kind is ChunkerKind.FIXED:
        return chunk_fixed(text, max_tokens, overlap, count_tokens, page=page)
    if is_markdown:
        return chunk_sentences_markdown(text, max_tokens, overlap, count_tokens)
    return chunk_sentences_text(text, max_tokens, overlap, count_tokens, page)


def _flagged(draft: ChunkDraft, document_flags: tuple[str, ...], max_tokens: int) -> ChunkedDraft:
    headings = "".join(f"{'#' * depth} {title}\n" for depth, title in _levels(draft))
    text = f"{headings}\n{draft.text}" if headings else draft.text
    flags, _ = assess_chunk(text, draft.has_code, draft.token_estimate, max_tokens)
    merged, level = with_level((*flags, *document_flags))
    return ChunkedDraft(draft, merged, level)


def _levels(draft: ChunkDraft) -> list[tuple[int, str]]:
    return [(min(depth, 6), title) for depth, title in enumerate(draft.section_path, start=1)]


def _decoded(content: bytes) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgument.field(
            "documents.content", "is not UTF-8 text; send UTF-8 or set the matching source type"
        ) from exc


def _naming(document: Document, error: InvalidArgument) -> InvalidArgument:
    """The same error with each violation's description prefixed by the document id."""
    prefix = f"document {document.document_id!r} "
    violations = tuple(FieldViolation(v.field, prefix + v.description) for v in error.violations)
    if not violations:
        return InvalidArgument(prefix + str(error))
    return InvalidArgument(f"{violations[0].field}: {violations[0].description}", violations)
