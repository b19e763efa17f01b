"""HTML to Markdown for the Markdown chunker, and the text of hidden elements for the risk rules.

Standard library only. Scripts, styles and page chrome (nav, footer, aside) are dropped; headings
become ATX headings (so HTML chunks get section paths), `pre` fenced code, tables pipe rows, links
`[text](href)`. Hidden elements (inline `display:none`, `visibility:hidden`, `font-size:0`,
`opacity:0`; `hidden`; `aria-hidden="true"`) and comments are left out; `extract_hidden_text` has them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

_DROPPED = set("script style noscript template head title nav footer aside svg iframe".split())
_NON_TEXT = {"script", "style", "template", "svg"}
_VOID = set("area base br col embed hr img input link meta source wbr".split())
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_STARTS_BLOCK = set(
    "p div section article main header blockquote figure figcaption details summary dl dt dd"
    " address form fieldset body center ul ol li pre table hr tr td th".split()
) | set(_HEADINGS)
_AUTO_CLOSE = {"li": {"li"}, "tr": {"tr", "td", "th"}, "td": {"td", "th"}, "th": {"td", "th"}}
_HIDING_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|opacity\s*:\s*0+(?:\.0+)?\s*(?:;|!|$)"
    r"|font-size\s*:\s*0+(?:\.0+)?[a-z%]*\s*(?:;|!|$)",
    re.IGNORECASE,
)
_SPACES = re.compile(r"[ \t\r\n\f\v]+")
_MARKDOWN_SYNTAX_AT_START = re.compile(r"^(?:#{1,6}(?:\s|$)|\||`{3,}|~{3,}|[=-]+\s*$)")
_CODE_LANGUAGE = re.compile(r"\b(?:language|lang)-([\w+#-]+)")


def html_to_markdown(html: str) -> str:
    """The visible main text of an HTML page as Markdown (empty when there is none)."""
    return _Reader(html).markdown()


def extract_hidden_text(html: str) -> list[str]:
    """Texts of hidden elements and comments, whitespace-collapsed, in document order."""
    return _Reader(html).hidden


def _is_hiding(attrs: dict[str, str]) -> bool:
    """True when an element's attributes hide it from readers."""
    aria_hidden = attrs.get("aria-hidden", "").strip().lower() == "true"
    return "hidden" in attrs or aria_hidden or bool(_HIDING_STYLE.search(attrs.get("style", "")))


@dataclass(slots=True)
class _Open:
    tag: str
    hides: bool
    mark: int = 0
    href: str = ""


class _Reader(HTMLParser):
    """One pass over the HTML: Markdown blocks of the visible text, and the hidden texts."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.hidden: list[str] = []
        self._parts: list[str] = []  # separators and Markdown blocks
        self._groups = self._last_group = 0  # blocks of one group > 0 (list, table) join tightly
        self._stack: list[_Open] = []
        self._inline: list[str] = []
        self._hidden_parts: list[str] = []
        self._lists: list[tuple[str, int]] = []  # (tag, items so far)
        self._list_group = self._table_group = 0
        self._heading = 0
        self._pre: list[str] | None = None
        self._language = ""
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.feed(html)
        self.close()

    def markdown(self) -> str:
        """The Markdown built so far (call after `close`)."""
        return "".join(self._parts).lstrip("\n")

    def parse_html_declaration(self, i: int) -> int:
        """As HTMLParser, except that a "<![" opening no known marked section (as in a regex
        `<![A-Z]`) is text, as browsers read it; Python 3.11's parser raises AssertionError."""
        try:
            return super().parse_html_declaration(i)
        except AssertionError:
            self.handle_data(self.rawdata[i : i + 3])
            return i + 3

    def close(self) -> None:
        super().close()
        while self._stack:
            self._pop()
        self._flush()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag in _VOID:
            if tag == "hr" and not self._silenced():
                self._flush()
            elif tag == "br" and not self._silenced():
                self._inline.append(" " if self._heading else "\n")
                self._pre = None if self._pre is None else [*self._pre, "\n"]
            return
        if self._stack and (tag in _STARTS_BLOCK and self._stack[-1].tag == "p"):
            self._pop()
        while self._stack and self._stack[-1].tag in _AUTO_CLOSE.get(tag, ()):
            self._pop()
        entry = _Open(tag, _is_hiding(values))
        self._stack.append(entry)
        if self._silenced():
            return
        self._open(entry, values)

    def handle_endtag(self, tag: str) -> None:
        while any(entry.tag == tag for entry in self._stack) and self._pop().tag != tag:
            pass

    def handle_data(self, data: str) -> None:
        tags = {entry.tag for entry in self._stack}
        if tags & _NON_TEXT:
            return
        if any(entry.hides for entry in self._stack):
            self._hidden_parts.append(data)
        elif tags & _DROPPED:
            return
        elif self._pre is not None:
            self._pre.append(data)
        else:
            self._inline.append(_SPACES.sub(" ", data))

    def handle_comment(self, data: str) -> None:
        text = _SPACES.sub(" ", data).strip()
        if text and not {entry.tag for entry in self._stack} & _NON_TEXT:
            self.hidden.append(text)

    def _silenced(self) -> bool:
        return any(entry.hides or entry.tag in _DROPPED for entry in self._stack)

    def _open(self, entry: _Open, values: dict[str, str]) -> None:
        tag = entry.tag
        if tag in _STARTS_BLOCK:
            self._flush()
        if tag in _HEADINGS:
            self._heading = _HEADINGS[tag]
        elif tag in {"ul", "ol"}:
            if not self._lists:
                self._groups += 1
                self._list_group = self._groups
            self._lists.append((tag, 0))
        elif tag == "li" and self._lists:
            kind, count = self._lists[-1]
            self._lists[-1] = (kind, count + 1)
        elif tag == "pre":
            self._pre = []
            self._language = _code_language(values)
        elif tag == "code" and self._pre is not None:
            self._language = self._language or _code_language(values)
        elif tag in {"code", "a"}:
            entry.mark = len(self._inline)
            entry.href = re.sub(r"[\t\n\r]", "", values.get("href", "")).strip()
        elif tag == "table":
            self._groups += 1
            self._table_group = self._groups
        elif tag == "tr":
            self._row = []
        elif tag in {"td", "th"}:
            self._cell = []

    def _pop(self) -> _Open:
        entry = self._stack.pop()
        if entry.hides and not any(item.hides for item in self._stack):
            text = _SPACES.sub(" ", "".join(self._hidden_parts)).strip()
            self._hidden_parts = []
            if text:
                self.hidden.append(text)
        if not self._silenced() and not entry.hides:
            self._close(entry)
        return entry

    def _close(self, entry: _Open) -> None:
        tag = entry.tag
        if tag in {"a", "code"} and self._pre is None:
            text = "".join(self._inline[entry.mark :]).strip()
            del self._inline[entry.mark :]
            self._inline.append(_inline_markup(tag, text, entry.href, bool(self._heading)))
        elif tag in _STARTS_BLOCK:
            self._flush()
        if tag in _HEADINGS:
            self._heading = 0
        elif tag in {"ul", "ol"} and self._lists:
            self._lists.pop()
        elif tag == "pre" and self._pre is not None:
            self._emit(_fenced("".join(self._pre), self._language), 0)
            self._pre = None
        elif tag in {"td", "th"} and self._cell is not None and self._row is not None:
            self._row.append(" ".join(self._cell).replace("|", "\\|"))
            self._cell = None
        elif tag == "tr" and self._row:
            first = self._last_group != self._table_group
            self._emit("| " + " | ".join(self._row) + " |", self._table_group)
            if first:
                self._emit("|" + " --- |" * len(self._row), self._table_group)
            self._row = None

    def _flush(self) -> None:
        lines = [line.strip() for line in "".join(self._inline).split("\n")]
        self._inline = []
        for entry in self._stack:
            entry.mark = 0
        lines = [_SPACES.sub(" ", line) for line in lines if line]
        if not lines:
            return
        if self._cell is not None:
            self._cell.extend(lines)
        elif self._heading:
            self._emit("#" * self._heading + " " + " ".join(lines), 0)
        elif self._lists:
            kind, count = self._lists[-1]
            bullet = f"{max(count, 1)}." if kind == "ol" else "-"
            indent = "  " * (len(self._lists) - 1)
            self._emit(f"{indent}{bullet} " + f"\n{indent}  ".join(lines), self._list_group)
        else:
            self._emit("\n".join(_escaped(line) for line in lines), 0)

    def _emit(self, text: str, group: int) -> None:
        self._parts += ["\n" if group and group == self._last_group else "\n\n", text]
        self._last_group = group


def _inline_markup(tag: str, text: str, href: str, in_heading: bool) -> str:
    if not text:
        return ""
    if tag == "code":
        ticks = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
        return f"{ticks}{text}{ticks}"
    if not href or in_heading:
        return text
    target = href.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    return "[" + text.replace("[", "\\[").replace("]", "\\]") + f"]({target})"


def _fenced(code: str, language: str) -> str:
    body = code.strip("\n")
    longest = max((len(run) for run in re.findall(r"`{3,}", body)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{body}\n{fence}"


def _code_language(values: dict[str, str]) -> str:
    return "".join(_CODE_LANGUAGE.findall(values.get("class", ""))[:1])


def _escaped(line: str) -> str:
    """A paragraph line, backslash-escaped where it would start a heading, table or fence."""
    return "\\" + line if _MARKDOWN_SYNTAX_AT_START.match(line) else line
