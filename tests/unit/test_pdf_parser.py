"""Tests of PDF text extraction and page-aware chunking (`core.ingest.pdf_parser`)."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

import pypdf
import pytest

from core.errors import FieldViolation, InvalidArgument
from core.ingest.pdf_parser import chunk_pdf, pdf_pages
from core.models import ChunkDraft

CountTokens = Callable[[str], int]


_PDF_STRING_ESCAPES = str.maketrans({"(": r"\(", ")": r"\)", "\\": r"\\"})


def make_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """A valid PDF 1.4 with one Helvetica text line per string, one page per inner sequence."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{4 + 2 * index} 0 R" for index in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for index, lines in enumerate(pages):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * index)
        )
        shown = ["(" + line.translate(_PDF_STRING_ESCAPES) + ") Tj T*" for line in lines]
        stream = "\n".join(["BT", "/F1 12 Tf", "14 TL", "72 720 Td", *shown, "ET"]).encode()
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def encrypted(pdf: bytes, user_password: str) -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


REPORT = make_pdf(
    [
        ["Quarterly report (Q3).", "Revenue grew by 12 percent."],
        [],
        ["Outlook: hiring resumes in Q4."],
    ]
)


def test_text_is_extracted_per_page_with_empty_pages_kept() -> None:
    assert pdf_pages(REPORT) == [
        "Quarterly report (Q3).\nRevenue grew by 12 percent.\n",
        "",
        "Outlook: hiring resumes in Q4.\n",
    ]


def test_chunks_keep_their_one_based_page_number(count_words: CountTokens) -> None:
    assert chunk_pdf(REPORT, 64, count_words) == [
        ChunkDraft("Quarterly report (Q3).\nRevenue grew by 12 percent.", token_estimate=8, page=1),
        ChunkDraft("Outlook: hiring resumes in Q4.", token_estimate=5, page=3),
    ]


def test_chunks_never_cross_pages(count_words: CountTokens) -> None:
    pdf = make_pdf([["One two three."], ["Four five six."]])

    assert [(c.text, c.page) for c in chunk_pdf(pdf, 1024, count_words)] == [
        ("One two three.", 1),
        ("Four five six.", 2),
    ]


def test_a_pdf_with_only_an_owner_password_is_read() -> None:
    assert pdf_pages(encrypted(REPORT, ""))[0].startswith("Quarterly report")


@pytest.mark.parametrize(
    ("content", "description"),
    [
        (b"", "is empty; send the PDF file's bytes in documents.content"),
        (b"  \n", "is empty; send the PDF file's bytes in documents.content"),
        (b"Quarterly report", "is not a PDF (no %PDF- header); send the file's raw bytes, not "
         "text or base64, or set the source type to match the content"),
        (REPORT[: len(REPORT) // 2], "is not a readable PDF (corrupt or truncated); re-export "
         "the file and send it again"),
        (b"%PDF-1.7\n" + bytes(range(256)) * 4, "is not a readable PDF (corrupt or truncated); "
         "re-export the file and send it again"),
        (encrypted(REPORT, "secret"), "is an encrypted PDF; remove the password protection and "
         "send it again"),
        (make_pdf([]), "is a PDF without pages; send a PDF with at least one page"),
        (make_pdf([[], []]), "is a PDF without extractable text (scanned images?); run OCR and "
         "send the text"),
    ],
    ids=["empty", "whitespace", "not-a-pdf", "truncated", "corrupt-bytes", "encrypted",
         "no-pages", "no-text"],
)  # fmt: skip
def test_unreadable_pdfs_are_invalid_arguments(content: bytes, description: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        pdf_pages(content)

    assert str(caught.value) == f"documents.content: {description}"
    assert caught.value.violations == (FieldViolation("documents.content", description),)
