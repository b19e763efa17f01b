"""Links of Markdown chunks: inline `[text](target)`, reference-style and `<autolinks>`.

HTML arrives here as Markdown (`html_to_markdown` writes links as `[text](href)`). Links inside
code (fenced blocks and code spans) and images are not links. Reference links use the
definitions (`[label]: target`) of the whole document, wherever they stand. Each link is resolved
against the linking document's source path (its id when it has none) by `link_targets`; the
link graph keeps only internal links (`ChunkLinks.links`) and the anchors each chunk can be
reached by (`ChunkLinks.anchors`, see `anchors.py`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.ingest.anchors import chunk_anchors
from core.ingest.link_targets import Link, resolve_link
from core.models import ChunkDraft, Document, SourceType

_TEXT = r"(?:\\.|[^\[\]\\]|\[(?:\\.|[^\[\]\\])*\])*"
_DESTINATION = (
    r"[ \t]*(?:<(?P<angled>[^<>\n]*)>|(?P<bare>(?:\\.|[^\s()\\]|\((?:\\.|[^\s()\\])*\))*))"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*"
)
_LINK = re.compile(
    rf"(?P<image>!?)\[(?P<text>{_TEXT})\]"
    rf"(?:\({_DESTINATION}\)|\[(?P<label>(?:\\.|[^\[\]\\])*)\])?"
    r"|<(?P<auto>[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>"
)
_DEFINITION = re.compile(
    r"^ {0,3}\[(?!\^)(?P<label>(?:\\.|[^\[\]\\])+)\]:[ \t]*(?:<(?P<angled>[^<>\n]*)>|(?P<bare>\S+))"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*$",
    re.MULTILINE,
)
_FENCED = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}(?P=fence)[ \t]*$|\Z)",
    re.MULTILINE | re.DOTALL,
)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


@dataclass(frozen=True, slots=True)
class ChunkLinks:
    """What the link graph records of one chunk: its internal links and its anchor slugs."""

    links: tuple[Link, ...] = ()
    anchors: tuple[str, ...] = ()


def document_links(document: Document, chunks: Sequence[ChunkDraft]) -> list[ChunkLinks]:
    """Internal links (in order, without repeats) and anchors of each chunk of `document`."""
    sources = [document.text] if document.source_type is SourceType.MARKDOWN else []
    definitions = reference_definitions("\n\n".join([*sources, *(c.text for c in chunks)]))
    base = document.source_path or document.document_id
    result: list[ChunkLinks] = []
    for chunk in chunks:
        links = [link for link in extract_links(chunk.text, base, definitions) if not link.external]
        result.append(
            ChunkLinks(tuple(dict.fromkeys(links)), chunk_anchors(chunk.section_path, chunk.text))
        )
    return result


def extract_links(
    markdown: str, base: str, definitions: Mapping[str, str] | None = None
) -> list[Link]:
    """Every link of `markdown` in order of appearance, resolved against the path or URL `base`.

    `definitions` maps normalised reference labels to destinations (see `reference_definitions`);
    the text's own definitions are added to them. External links are included (`external`).
    """
    known = {**reference_definitions(markdown), **(definitions or {})}
    text = _without_code(_DEFINITION.sub("", markdown))
    links: list[Link] = []
    for match in _LINK.finditer(text):
        destination = _destination(match, known)
        if destination is None:
            continue
        link = resolve_link(destination, base)
        if link is not None:
            links.append(link)
    return links


def reference_definitions(markdown: str) -> dict[str, str]:
    """Link reference definitions by normalised label; the first definition of a label wins."""
    found: dict[str, str] = {}
    for match in _DEFINITION.finditer(_without_code(markdown)):
        target = match.group("angled") if match.group("angled") is not None else match["bare"]
        found.setdefault(_label(match.group("label")), _ESCAPE.sub(r"\1", target))
    return found


def _destination(match: re.Match[str], definitions: Mapping[str, str]) -> str | None:
    """The destination a link match names, or None for an image or an undefined reference."""
    if match.group("auto") is not None:
        return match.group("auto")
    if match.group("image"):
        return None
    for group in ("angled", "bare"):
        if match.group(group) is not None:
            return _ESCAPE.sub(r"\1", match.group(group))
    label = match.group("label")
    return definitions.get(_label(label or match.group("text")))


def _label(label: str) -> str:
    """A reference label as matched: case-folded, inner whitespace collapsed."""
    return " ".join(label.split()).casefold()


def _without_code(markdown: str) -> str:
    """`markdown` with fenced code blocks and code spans blanked out (links there are code)."""
    return _CODE_SPAN.sub("`code`", _FENCED.sub("", markdown))
