"""Text per page of a PDF (with `pypdf`), and chunks of it that keep their 1-based page number.

Problems with the bytes (empty, not a PDF, corrupt, encrypted, no text layer) raise
`InvalidArgument` on "documents.content" with a message that names the fix and no document, so a
caller can prefix the document id.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence
from dataclasses import replace

import pypdf
from pypdf.errors import PyPdfError

from core.errors import InvalidArgument
from core.ingest.packing import CountTokens
from core.ingest.text_chunker import chunk_text
from core.models import ChunkDraft

logger = logging.getLogger(__name__)

CONTENT_FIELD = "documents.content"
EMPTY = "is empty; send the PDF file's bytes in documents.content"
NOT_A_PDF = (
    "is not a PDF (no %PDF- header); send the file's raw bytes, not text or base64, "
    "or set the source type to match the content"
)
CORRUPT = "is not a readable PDF (corrupt or truncated); re-export the file and send it again"
ENCRYPTED = "is an encrypted PDF; remove the password protection and send it again"
NO_PAGES = "is a PDF without pages; send a PDF with at least one page"
NO_TEXT = "is a PDF without extractable text (scanned images?); run OCR and send the text"

# pypdf raises its own errors for most damage, and plain ones for the rest of it.
_READ_ERRORS = (PyPdfError, ValueError, TypeError, KeyError, IndexError, AttributeError, OSError)


def pdf_pages(content: bytes) -> list[str]:
    """The extracted text of every page, in page order (a page without text gives "").

    Raises InvalidArgument when the PDF is empty, corrupt, encrypted with a password, has no
    pages, or has no text on any page.
    """
    if not content.strip():
        raise InvalidArgument.field(CONTENT_FIELD, EMPTY)
    if b"%PDF-" not in content[:1024]:
        raise InvalidArgument.field(CONTENT_FIELD, NOT_A_PDF)
    reader = _open(content)
    try:
        pages = [_page_text(page) for page in reader.pages]
    except _READ_ERRORS as exc:
        logger.debug("PDF page tree unreadable: %s", exc)
        raise InvalidArgument.field(CONTENT_FIELD, CORRUPT) from exc
    if not pages:
        raise InvalidArgument.field(CONTENT_FIELD, NO_PAGES)
    if not any(text.strip() for text in pages):
        raise InvalidArgument.field(CONTENT_FIELD, NO_TEXT)
    return pages


def chunk_pdf(content: bytes, max_tokens: int, count_tokens: CountTokens) -> list[ChunkDraft]:
    """Chunks of a PDF: each page through the text chunker, `page` set to its 1-based number."""
    return chunk_pages(pdf_pages(content), max_tokens, count_tokens)


def chunk_pages(
    pages: Sequence[str], max_tokens: int, count_tokens: CountTokens
) -> list[ChunkDraft]:
    """Chunks of already extracted page texts; chunks never cross a page."""
    return [
        replace(draft, page=number)
        for number, text in enumerate(pages, start=1)
        for draft in chunk_text(text, max_tokens, count_tokens)
    ]


def _open(content: bytes) -> pypdf.PdfReader:
    try:
        reader = pypdf.PdfReader(io.BytesIO(content), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise InvalidArgument.field(CONTENT_FIELD, ENCRYPTED)
    except InvalidArgument:
        raise
    except (*_READ_ERRORS, NotImplementedError) as exc:
        logger.debug("PDF unreadable: %s", exc)
        if "encrypt" in str(exc).lower() or "crypt" in type(exc).__name__.lower():
            raise InvalidArgument.field(CONTENT_FIELD, ENCRYPTED) from exc
        raise InvalidArgument.field(CONTENT_FIELD, CORRUPT) from exc
    return reader


def _page_text(page: pypdf.PageObject) -> str:
    """The text of one page; a page whose content stream cannot be read counts as empty."""
    try:
        return page.extract_text() or ""
    except _READ_ERRORS as exc:
        logger.debug("PDF page text unreadable: %s", exc)
        return ""
