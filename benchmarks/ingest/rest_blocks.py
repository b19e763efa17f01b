"""A small reader of the reStructuredText in Python's documentation sources: blocks and inline spans.

Enough for rendering python-faq corpus sections as real-looking Markdown, text, HTML and PDF
pages: paragraphs, literal blocks (after `::` or a code-block directive), bullet lists, simple
tables, admonitions; inline literals, roles, hyperlinks, emphasis. Not a full reST parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CODE_DIRECTIVES = ("code-block", "sourcecode", "code", "doctest", "testcode", "productionlist")
CODE_ROLES = {"func", "meth", "class", "mod", "data", "attr", "exc", "const", "option", "file"}
_INLINE = re.compile(
    r"``(?P<literal>.+?)``"
    r"|:(?P<role>[a-z:]+):`(?P<role_text>[^`]+)`"
    r"|`(?P<link_text>[^`<]+?)\s*<(?P<url>https?://[^>]+)>`__?"
    r"|`(?P<ref>[^`]+)`_{1,2}"
    r"|\*\*(?P<strong>[^*]+)\*\*"
    r"|\*(?P<em>[^*\s][^*]*)\*"
)
_TITLED_TARGET = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^>]+)>$")


@dataclass(frozen=True, slots=True)
class Span:
    """Inline text: kind is "text", "code", "link", "em" or "strong"; url only for links."""

    kind: str
    text: str
    url: str = ""


@dataclass(frozen=True, slots=True)
class Block:
    """A block: "paragraph", "code", "signature" (an API entry), "bullets" or "table"."""

    kind: str
    lines: tuple[str, ...]
    language: str = ""


def inline(text: str) -> list[Span]:
    """Split reST inline markup into spans (roles become code or plain text, PEPs links)."""
    spans: list[Span] = []
    position = 0
    for match in _INLINE.finditer(text):
        if match.start() > position:
            spans.append(Span("text", text[position : match.start()]))
        spans.append(_span(match))
        position = match.end()
    if position < len(text):
        spans.append(Span("text", text[position:]))
    return spans


def _span(match: re.Match[str]) -> Span:
    if match["literal"] is not None:
        return Span("code", match["literal"])
    if match["role"] is not None:
        return _role(match["role"].split(":")[-1], match["role_text"])
    if match["url"] is not None:
        return Span("link", match["link_text"], match["url"])
    if match["ref"] is not None:
        return Span("text", match["ref"])
    if match["strong"] is not None:
        return Span("strong", match["strong"])
    return Span("em", match["em"])


def _role(role: str, text: str) -> Span:
    titled = _TITLED_TARGET.match(text)
    shown = titled["text"] if titled else text.lstrip("!~")
    if not titled and text.startswith("~"):
        shown = shown.rsplit(".", 1)[-1]
    if role == "pep":
        number = int(re.sub(r"\D", "", shown) or 0)
        return Span("link", f"PEP {number}", f"https://peps.python.org/pep-{number:04d}/")
    if role in ("issue", "gh"):
        return Span("link", f"issue {shown}", f"https://github.com/python/cpython/issues/{shown}")
    if role in CODE_ROLES:
        return Span("code", shown)
    return Span("text", shown)


def plain(text: str) -> str:
    """Inline markup flattened to its text (for headings)."""
    return "".join(span.text for span in inline(text))


def blocks(body: str) -> list[Block]:
    """The blocks of a section body, in order; comments, labels and metadata are dropped."""
    return _Reader(body.splitlines()).read()


class _Reader:
    """Reads blocks from lines at one indentation level; directive bodies recurse."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.i = 0

    def read(self) -> list[Block]:
        out: list[Block] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if not line.strip():
                self.i += 1
            elif line.startswith(".."):
                out.extend(self._directive())
            elif line[0].isspace():
                out.extend(_Reader(_dedent(self._indented())).read())  # a block quote
            elif line.startswith(("===", "+--")):
                out.append(Block("table", tuple(self._until_blank())))
            elif _BULLET.match(line):
                out.append(Block("bullets", tuple(_bullets(self._until_blank()))))
            else:
                out.extend(self._paragraph())
        return out

    def _paragraph(self) -> list[Block]:
        text = " ".join(line.strip() for line in self._until_blank())
        if not text.endswith("::"):
            return [Block("paragraph", (text,))]
        text = text[:-2].rstrip() + ("" if text.endswith(" ::") else ":")
        code = _dedent(self._indented())
        head = [Block("paragraph", (text,))] if text else []
        return head + ([Block("code", tuple(code), "python")] if code else [])

    def _directive(self) -> list[Block]:
        match = _DIRECTIVE.match(self.lines[self.i])
        self.i += 1
        while self.i < len(self.lines) and self.lines[self.i].strip().startswith(":"):
            self.i += 1  # directive options (:synopsis:, :noindex: ...)
        content = _dedent(self._indented())
        if match is None:
            return []  # a comment or a label target
        name, argument = match["name"], match["argument"].strip()
        if name in CODE_DIRECTIVES:
            return [Block("code", tuple(content), argument or "python")] if content else []
        if name in SIGNATURE_DIRECTIVES:
            return [Block("signature", (argument,)), *_Reader(content).read()]
        if name in LABELLED_DIRECTIVES:
            label = LABELLED_DIRECTIVES[name].format(argument=argument).strip()
            return [Block("paragraph", (label,)), *_Reader(content).read()]
        return []  # metadata: module, index, sectionauthor, testsetup, toctree ...

    def _until_blank(self) -> list[str]:
        start = self.i
        while self.i < len(self.lines) and self.lines[self.i].strip():
            self.i += 1
        return self.lines[start : self.i]

    def _indented(self) -> list[str]:
        """The indented lines from here on (blank lines inside included)."""
        start = self.i
        end = self.i
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.strip() and not line[0].isspace():
                break
            self.i += 1
            if line.strip():
                end = self.i
        self.i = end if end > start else self.i
        return self.lines[start:end]


_BULLET = re.compile(r"^([*\-+]|#\.|\d+\.)\s")
_DIRECTIVE = re.compile(r"^\.\.\s+(?P<name>[\w:-]+)::(?P<argument>.*)$")
SIGNATURE_DIRECTIVES = {
    "function",
    "method",
    "class",
    "attribute",
    "data",
    "exception",
    "decorator",
    "describe",
    "classmethod",
    "staticmethod",
    "abstractmethod",
    "coroutinefunction",
    "coroutinemethod",
    "opcode",
    "cmdoption",
    "option",
    "envvar",
    "c:function",
    "c:macro",
    "c:type",
    "c:member",
    "c:var",
    "pdbcommand",
    "decoratormethod",
}
LABELLED_DIRECTIVES = {
    "note": "Note: {argument}",
    "warning": "Warning: {argument}",
    "seealso": "See also: {argument}",
    "versionadded": "New in version {argument}.",
    "versionchanged": "Changed in version {argument}.",
    "deprecated": "Deprecated since version {argument}.",
    "impl-detail": "CPython implementation detail: {argument}",
    "tip": "Tip: {argument}",
    "important": "Important: {argument}",
    "attention": "Attention: {argument}",
    "caution": "Caution: {argument}",
    "hint": "Hint: {argument}",
    "admonition": "{argument}",
    "topic": "{argument}",
    "rubric": "{argument}",
}


def _bullets(lines: list[str]) -> list[str]:
    items: list[str] = []
    for line in lines:
        match = re.match(r"^\s*([*\-+]|#\.|\d+\.)\s+(.*)$", line)
        if match:
            items.append(match.group(2).strip())
        elif items:
            items[-1] += " " + line.strip()
    return items


def _dedent(lines: list[str]) -> list[str]:
    widths = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(widths, default=0)
    return [line[cut:].rstrip() for line in lines]
