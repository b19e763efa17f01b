"""Section anchors: the fragment ids a heading is reachable by, GitHub-style and Sphinx-style.

A link `page.md#installing-packages` points at the section whose heading slugs to
`installing-packages`. GitHub renders Markdown headings with `github_slug` ids; Sphinx (and
docutils) with `sphinx_slug` ids, which is also what the Python documentation uses. A chunk is
reachable by the slugs of every heading in its section path, and, for chunks of the fixed-size
chunker that keep heading lines in their text, by those headings too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import unquote

_INLINE_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_NOT_SPHINX_ID = re.compile(r"[^a-z0-9]+")
_SPHINX_ENDS = re.compile(r"^[-0-9]+|-+$")
_ATX_LINE = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_FENCE_LINE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})", re.MULTILINE)


def github_slug(heading: str) -> str:
    """The id GitHub gives a Markdown heading: lowercase, punctuation dropped, spaces to hyphens.

    Letters, digits, marks, "-" and "_" are kept; Markdown link syntax counts as its text.
    """
    text = _INLINE_LINK.sub(r"\1", heading).strip().lower()
    kept = (
        ch for ch in text if ch.isalnum() or ch in " -_" or unicodedata.category(ch).startswith("M")
    )
    return "".join(kept).replace(" ", "-")


def sphinx_slug(heading: str) -> str:
    """The id docutils gives a section title (`docutils.nodes.make_id`).

    ASCII letters and digits only, other runs become one hyphen; leading digits and hyphens and
    trailing hyphens are dropped ("3. Data model" -> "data-model").
    """
    text = _INLINE_LINK.sub(r"\1", heading).lower()
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return _SPHINX_ENDS.sub("", _NOT_SPHINX_ID.sub("-", " ".join(ascii_text.split())))


def heading_slugs(headings: Iterable[str]) -> tuple[str, ...]:
    """The GitHub and Sphinx slugs of `headings`, unique and sorted (empty slugs left out)."""
    slugs = {slug for heading in headings for slug in (github_slug(heading), sphinx_slug(heading))}
    slugs.discard("")
    return tuple(sorted(slugs))


def chunk_anchors(section_path: Iterable[str], text: str) -> tuple[str, ...]:
    """The slugs a chunk is reachable by: its section path's headings and its ATX heading lines.

    Heading lines inside fenced code (a "# comment" in Python) are not headings.
    """
    return heading_slugs([*section_path, *_text_headings(text)])


def fragment_candidates(fragment: str) -> tuple[str, ...]:
    """The anchor slugs a link fragment may name, most literal first (empty for no fragment).

    The fragment as written (percent-decoded), lowercased, then slugged both ways, so that
    "#os.getcwd" also finds a heading "os.getcwd()" (Sphinx slug "os-getcwd").
    """
    decoded = unquote(fragment).strip()
    if not decoded:
        return ()
    candidates = (decoded, decoded.lower(), github_slug(decoded), sphinx_slug(decoded))
    return tuple(dict.fromkeys(c for c in candidates if c))


def _text_headings(text: str) -> list[str]:
    """ATX heading texts of `text` outside fenced code."""
    if "#" not in text:
        return []
    outside_fences = _FENCE_LINE.split(text)[::2]  # odd pieces lie between an open and a close
    return [match.group(1) for piece in outside_fences for match in _ATX_LINE.finditer(piece)]
