"""Python documentation pages from python-faq corpus sections, rendered as Markdown, plain text,
HTML and PDF, the four formats `groundwire` ingests.

A page is up to SECTIONS_PER_PAGE consecutive sections of one source page: the first section's
heading is the page title (h1), the others are h2. PDFs come from the same writer the tests use
(`tests/unit/test_pdf_parser.py::make_pdf`: Helvetica text lines, so ASCII only), wrapped at
PDF_COLUMNS characters and PDF_LINES lines per page.
"""

from __future__ import annotations

import html
import json
import random
import textwrap
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.ingest.rest_blocks import Block, Span, blocks, inline, plain
from tests.unit.test_pdf_parser import make_pdf

SECTIONS_PER_PAGE = 4
PDF_COLUMNS = 90
PDF_LINES = 50
DOCS_URL = "https://docs.python.org/3.11/"


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the parsed blocks under it."""

    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True, slots=True)
class Page:
    """A documentation page: its source path (e.g. "library/json") and its sections."""

    source: str
    sections: tuple[Section, ...]

    @property
    def title(self) -> str:
        """The first section's heading."""
        return self.sections[0].title


def load_pages(corpus: Path, sections: int, seed: int) -> list[Page]:
    """About `sections` sections grouped into pages, from source pages in a seeded random order."""
    by_page: dict[str, list[dict[str, str]]] = defaultdict(list)
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            by_page[row["_id"].split("#")[0]].append(row)
    order = sorted(by_page)
    random.Random(seed).shuffle(order)
    pages: list[Page] = []
    taken = 0
    for source in order:
        rows = by_page[source][:SECTIONS_PER_PAGE]
        parsed = tuple(Section(plain(r["title"]), tuple(blocks(r["text"]))) for r in rows)
        pages.append(Page(source.removesuffix(".rst.txt"), parsed))
        taken += len(rows)
        if taken >= sections:
            break
    return pages


# ---- Markdown ---------------------------------------------------------------------------------


def markdown(page: Page) -> str:
    """The page as CommonMark: ATX headings, fenced code, lists, links, code spans."""
    out: list[str] = []
    for depth, section in enumerate(page.sections):
        out.append(f"{'#' if depth == 0 else '##'} {section.title}\n")
        out.extend(_markdown_block(block) for block in section.blocks)
    return "\n".join(out)


def _markdown_block(block: Block) -> str:
    if block.kind == "code":
        return f"```{block.language}\n" + "\n".join(block.lines) + "\n```\n"
    if block.kind == "table":
        return "```\n" + "\n".join(block.lines) + "\n```\n"
    if block.kind == "bullets":
        return "".join(f"- {_markdown_inline(item)}\n" for item in block.lines)
    if block.kind == "signature":
        return f"`{block.lines[0]}`\n"
    return _markdown_inline(block.lines[0]) + "\n"


def _markdown_inline(text: str) -> str:
    return "".join(_markdown_span(span) for span in inline(text))


def _markdown_span(span: Span) -> str:
    if span.kind == "code":
        return f"`{span.text}`"
    if span.kind == "link":
        return f"[{span.text}]({span.url})"
    if span.kind == "em":
        return f"*{span.text}*"
    if span.kind == "strong":
        return f"**{span.text}**"
    return span.text


# ---- plain text -------------------------------------------------------------------------------


def plain_text(page: Page) -> str:
    """The page as Sphinx's text builder writes it: underlined headings, indented code."""
    out: list[str] = []
    for depth, section in enumerate(page.sections):
        out.append(f"{section.title}\n{('=' if depth == 0 else '-') * len(section.title)}\n")
        out.extend(_text_block(block) for block in section.blocks)
    return "\n".join(out)


def _text_block(block: Block) -> str:
    if block.kind in ("code", "table"):
        return "".join(f"   {line}\n" for line in block.lines)
    if block.kind == "bullets":
        return "".join(f"* {_text_inline(item)}\n" for item in block.lines)
    if block.kind == "signature":
        return block.lines[0] + "\n"
    return textwrap.fill(_text_inline(block.lines[0]), 79) + "\n"


def _text_inline(text: str) -> str:
    return "".join(f"{s.text} ({s.url})" if s.kind == "link" else s.text for s in inline(text))


# ---- HTML -------------------------------------------------------------------------------------


def html_page(page: Page) -> str:
    """A full HTML5 page: head, navigation, headings with anchors, <pre> code, links, footer."""
    body: list[str] = []
    for depth, section in enumerate(page.sections):
        tag = "h1" if depth == 0 else "h2"
        anchor = "-".join(section.title.lower().split())[:60]
        body.append(f'<section id="{html.escape(anchor)}">')
        body.append(f"<{tag}>{html.escape(section.title)}</{tag}>")
        body.extend(_html_block(block) for block in section.blocks)
        body.append("</section>")
    title = html.escape(page.title)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            f'<head><meta charset="utf-8"><title>{title} — Python 3.11 documentation</title>',
            '<link rel="stylesheet" href="../_static/pydoctheme.css"></head>',
            "<body>",
            f'<nav class="related"><a href="{DOCS_URL}index.html">Python 3.11 documentation</a>'
            f' &raquo; <a href="{DOCS_URL}{html.escape(page.source)}.html">{title}</a></nav>',
            '<div class="body" role="main">',
            *body,
            "</div>",
            "<footer>&copy; Copyright 2001-2023, Python Software Foundation.</footer>",
            "</body></html>",
        ]
    )


def _html_block(block: Block) -> str:
    if block.kind == "code":
        code = html.escape("\n".join(block.lines))
        return f'<pre><code class="language-{block.language}">{code}</code></pre>'
    if block.kind == "table":
        return "<pre>" + html.escape("\n".join(block.lines)) + "</pre>"
    if block.kind == "bullets":
        items = "".join(f"<li>{_html_inline(item)}</li>" for item in block.lines)
        return f"<ul>{items}</ul>"
    if block.kind == "signature":
        return f'<p class="sig"><code>{html.escape(block.lines[0])}</code></p>'
    return f"<p>{_html_inline(block.lines[0])}</p>"


def _html_inline(text: str) -> str:
    parts = []
    for span in inline(text):
        escaped = html.escape(span.text)
        if span.kind == "code":
            parts.append(f'<code class="docutils literal">{escaped}</code>')
        elif span.kind == "link":
            parts.append(
                f'<a class="reference external" href="{html.escape(span.url)}">{escaped}</a>'
            )
        elif span.kind in ("em", "strong"):
            parts.append(f"<{span.kind}>{escaped}</{span.kind}>")
        else:
            parts.append(escaped)
    return "".join(parts)


# ---- PDF --------------------------------------------------------------------------------------


def pdf(page: Page) -> bytes:
    """A multi-page PDF of the plain-text rendering (ASCII, wrapped, PDF_LINES lines a page)."""
    lines: list[str] = []
    for line in _ascii(plain_text(page)).splitlines():
        lines.extend(textwrap.wrap(line, PDF_COLUMNS, drop_whitespace=False) or [""])
    pages = [lines[i : i + PDF_LINES] for i in range(0, len(lines), PDF_LINES)]
    return make_pdf(pages)


def _ascii(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text)
    return folded.encode("ascii", "ignore").decode("ascii")


RENDERERS = {"markdown": markdown, "text": plain_text, "html": html_page}
SUFFIXES = {"markdown": ".md", "text": ".txt", "html": ".html", "pdf": ".pdf"}


def render(page: Page, kind: str) -> str | bytes:
    """The page in format `kind` ("markdown", "text", "html" or "pdf")."""
    return pdf(page) if kind == "pdf" else RENDERERS[kind](page)


def render_all(pages: Sequence[Page], kind: str) -> list[tuple[str, str | bytes]]:
    """(document id, content) of every page in one format."""
    return [(f"{p.source}{SUFFIXES[kind]}", render(p, kind)) for p in pages]
