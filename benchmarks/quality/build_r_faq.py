"""Build the r-faq labelled set (BEIR layout) from the Debian package `r-doc-html`.

Same recipe as python-faq (../shared/data/python-faq/README.md) and perl-faq
(build_perl_faq.py), on a third kind of documentation: the R manuals, Texinfo-generated HTML.
The corpus is every section (heading + body, body >= 80 characters) of the seven manuals under
`/usr/share/R/doc/manual/` (R-FAQ, R-intro, R-data, R-admin, R-lang, R-exts, R-ints), split at
every `<h1>`..`<h5>` heading; the section numbers ("7.31 ") are dropped from headings. Navigation
bars, tables of contents, menus and index tables are left out; `<pre>` blocks keep their layout.
The queries are the R-FAQ headings that end in "?"; the relevant document of a query is that FAQ
section's body without its heading (its `title` is empty).

Run (no network beyond apt):
    cd /tmp && apt-get download r-doc-html && dpkg-deb -x r-doc-html_*.deb r-doc-html
    python -m benchmarks.quality.build_r_faq /tmp/r-doc-html/usr/share/R/doc/manual \
        benchmarks/data/r-faq
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from benchmarks.quality.faq_set import FaqSection, write_faq_set

FAQ_PAGE = "R-FAQ"
_HEADINGS = {"h1", "h2", "h3", "h4", "h5"}
_BLOCKS = _HEADINGS | {
    "p",
    "div",
    "li",
    "pre",
    "br",
    "tr",
    "dt",
    "dd",
    "table",
    "ul",
    "ol",
    "dl",
    "blockquote",
    "hr",
}
# Elements whose whole content is navigation or an index, not text of the section.
_SKIPPED_CLASSES = re.compile(
    r"^(header|contents|shortcontents|section-toc|mini-toc|menu|toc|nav-panel|summary-letter)$"
    r"|^index-"
)
_VOID = {"br", "hr", "img", "meta", "link", "input", "col", "area", "base", "wbr"}
_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)+)\.?\s+")


@dataclass
class Section:
    page: str
    index: int
    heading: str
    parts: list[str] = field(default_factory=list)

    def body(self) -> str:
        lines = [line.rstrip() for line in "".join(self.parts).split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


class _ManualParser(HTMLParser):
    """Splits one Texinfo HTML manual into sections at its headings."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.sections: list[Section] = []
        self._stack: list[tuple[str, bool]] = []  # (tag, opened a skipped region)
        self._skip_depth = 0
        self._pre_depth = 0
        self._heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        skipped = any(_SKIPPED_CLASSES.search(name) for name in classes)
        if tag not in _VOID:
            self._stack.append((tag, skipped))
            if skipped:
                self._skip_depth += 1
        if self._skip_depth:
            return
        if tag in _HEADINGS:
            self._heading = []
        elif tag == "pre":
            self._pre_depth += 1
        if tag in _BLOCKS:
            self._emit("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or not any(open_tag == tag for open_tag, _ in self._stack):
            return
        while self._stack:
            open_tag, skipped = self._stack.pop()
            if skipped:
                self._skip_depth -= 1
            elif not self._skip_depth:
                self._close(open_tag)
            if open_tag == tag:
                break

    def _close(self, tag: str) -> None:
        if tag in _HEADINGS and self._heading is not None:
            text = re.sub(r"\s+", " ", "".join(self._heading)).strip()
            self._heading = None
            self.sections.append(Section(self.page, len(self.sections), _NUMBER.sub("", text)))
        elif tag == "pre":
            self._pre_depth = max(0, self._pre_depth - 1)
        if tag in _BLOCKS:
            self._emit("\n")

    def handle_data(self, data: str) -> None:
        if self._skip_depth:
            return
        if self._heading is not None:
            self._heading.append(data)
            return
        if self._pre_depth:
            self._emit(data)
            return
        text = re.sub(r"\s+", " ", data)
        if self.sections and (
            not self.sections[-1].parts or self.sections[-1].parts[-1].endswith("\n")
        ):
            text = text.lstrip()
        self._emit(text)

    def _emit(self, text: str) -> None:
        if self.sections and text:
            self.sections[-1].parts.append(text)


def sections(path: Path) -> list[Section]:
    """The manual's sections in order; text before the first heading (title page) is dropped."""
    parser = _ManualParser(path.stem)
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    parser.close()
    return parser.sections


def build(manual_dir: Path, out: Path) -> dict[str, int]:
    return write_faq_set(_faq_sections(manual_dir), out)


def _faq_sections(manual_dir: Path) -> Iterator[FaqSection]:
    for path in sorted(manual_dir.glob("*.html")):
        in_faq = path.stem == FAQ_PAGE
        for section in sections(path):
            doc_id = f"{section.page}#{section.index}"
            yield FaqSection(doc_id, section.heading, section.body(), in_faq)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("manual_dir", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    print(build(args.manual_dir, args.out))


if __name__ == "__main__":
    main()
