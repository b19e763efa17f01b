"""Parse Markdown into sections: the blocks under each heading, with the heading path.

A line-based reader of the CommonMark block structure that matters for chunking: ATX and setext
headings, fenced code (``` and ~~~, never split, headings inside are plain text), indented code,
pipe tables, thematic breaks and paragraphs. A leading YAML front matter block is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.ingest.packing import Block, BlockKind

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[ \t]*$")
_ATX_HEADING = re.compile(r"^ {0,3}(?P<marks>#{1,6})(?:[ \t]+(?P<text>.*?))?[ \t]*$")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?P<mark>=+|-+)[ \t]*$")
_THEMATIC_BREAK = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")


@dataclass(frozen=True, slots=True)
class Section:
    """The blocks under one heading; `path` holds the heading texts, outermost first."""

    path: tuple[str, ...]
    blocks: tuple[Block, ...]


def parse_sections(text: str) -> list[Section]:
    """The non-empty sections of a Markdown document, in document order."""
    reader = _Reader()
    body = _FRONT_MATTER.sub("", text.replace("\r\n", "\n").replace("\r", "\n"), count=1)
    for line in body.split("\n"):
        reader.feed(line)
    return reader.finish()


def _is_indented(line: str) -> bool:
    return line.startswith(("    ", "\t"))


class _Reader:
    """Feeds lines one by one, closing blocks and sections as their ends are seen."""

    def __init__(self) -> None:
        self._sections: list[Section] = []
        self._headings: list[tuple[int, str]] = []
        self._blocks: list[Block] = []
        self._paragraph: list[str] = []
        self._table: list[str] = []
        self._indented: list[str] = []
        self._fenced: list[str] = []
        self._fence = ""

    def feed(self, line: str) -> None:
        """Consume one line (without its newline)."""
        if self._fence:
            self._feed_fenced(line)
        elif self._indented and (_is_indented(line) or not line.strip()):
            self._indented.append(line)
        else:
            self._close_indented()
            self._feed_line(line)

    def finish(self) -> list[Section]:
        """Close everything still open and return the sections."""
        if self._fence:
            self._close_fenced()
        self._close_indented()
        self._close_section()
        return self._sections

    def _feed_line(self, line: str) -> None:
        if not line.strip():
            self._close_text()
        elif (fence := _opening_fence(line)) is not None:
            self._close_text()
            self._fence, self._fenced = fence, [line]
        elif atx := _ATX_HEADING.match(line):
            self._close_text()
            title = _ATX_CLOSING.sub("", atx.group("text") or "").strip()
            self._start_section(len(atx.group("marks")), title)
        elif self._paragraph and (setext := _SETEXT_UNDERLINE.match(line)):
            title = " ".join(part.strip() for part in self._paragraph)
            self._paragraph = []
            self._start_section(1 if setext.group("mark")[0] == "=" else 2, title)
        elif _THEMATIC_BREAK.match(line):
            self._close_text()
        else:
            self._feed_content(line)

    def _feed_content(self, line: str) -> None:
        if not self._paragraph and not self._table and _is_indented(line):
            self._indented = [line]
        elif line.lstrip().startswith("|"):
            self._close_paragraph()
            self._table.append(line)
        else:
            self._close_table()
            self._paragraph.append(line)

    def _feed_fenced(self, line: str) -> None:
        self._fenced.append(line)
        closing = _FENCE_CLOSE.match(line)
        if closing and closing.group("fence").startswith(self._fence):
            self._close_fenced()

    def _start_section(self, level: int, title: str) -> None:
        self._close_section()
        self._headings = [(lvl, text) for lvl, text in self._headings if lvl < level]
        if title:
            self._headings.append((level, title))

    def _close_section(self) -> None:
        self._close_text()
        if self._blocks:
            path = tuple(text for _, text in self._headings)
            self._sections.append(Section(path, tuple(self._blocks)))
        self._blocks = []

    def _close_text(self) -> None:
        self._close_paragraph()
        self._close_table()

    def _close_paragraph(self) -> None:
        if self._paragraph:
            self._blocks.append(Block("\n".join(self._paragraph).strip()))
        self._paragraph = []

    def _close_table(self) -> None:
        if self._table:
            self._blocks.append(Block("\n".join(self._table).strip(), BlockKind.TABLE))
        self._table = []

    def _close_indented(self) -> None:
        while self._indented and not self._indented[-1].strip():
            self._indented.pop()
        if self._indented:
            self._blocks.append(Block("\n".join(self._indented).rstrip(), BlockKind.CODE))
        self._indented = []

    def _close_fenced(self) -> None:
        self._blocks.append(Block("\n".join(self._fenced).strip("\n"), BlockKind.CODE))
        self._fence, self._fenced = "", []


def _opening_fence(line: str) -> str | None:
    """The fence (for example "```") a line opens, or None if it opens none."""
    match = _FENCE_OPEN.match(line)
    if match is None:
        return None
    fence = match.group("fence")
    if fence[0] == "`" and "`" in match.group("info"):
        return None
    return fence
