"""Where a link points: its destination resolved against the linking document's path.

Paths are compared in one normal form (`normalise_path`): "/" separators, percent-decoded, "."
and ".." segments folded, no leading "./". A document whose source path is a URL resolves
relative links as a browser does (`urljoin`). A destination with a scheme ("https:", "mailto:")
or starting with "//" is external: it names no document of the collection.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from core.models import SUFFIXES

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_WEB_SCHEMES = ("http", "https")
DOCUMENT_SUFFIXES = tuple(suffix for suffixes, _ in SUFFIXES for suffix in suffixes)
"""File suffixes `path_stem` drops (at most two, so "os.rst.txt" gives "os")."""


@dataclass(frozen=True, slots=True)
class Link:
    """One link of a chunk.

    `target` is the normalised path or URL of the linked document ("" for a link to a fragment of
    the linking document itself; the URL as written for an external link); `fragment` is the
    percent-decoded part after "#" ("" when there is none).
    """

    target: str
    fragment: str = ""
    external: bool = False


def resolve_link(destination: str, base: str) -> Link | None:
    """The link a Markdown destination makes in a document at path or URL `base`.

    None for a destination naming no document ("", "?page=2", "./" at the top). Query strings
    are dropped. A fragment-only destination ("#usage") targets the linking document.
    """
    raw = destination.strip()
    if not raw:
        return None
    without_fragment, _, fragment = raw.partition("#")
    fragment = unquote(fragment).strip()
    if _SCHEME.match(raw) or raw.startswith("//"):
        return Link(without_fragment, fragment, external=True)
    path = without_fragment.partition("?")[0]
    if not path:
        return Link("", fragment) if fragment else None
    if is_url(base):
        target = normalise_path(urljoin(base, path))
    elif path.startswith("/"):
        target = normalise_path(path)
    else:
        target = normalise_path(posixpath.join(posixpath.dirname(normalise_path(base)), path))
    return Link(target, fragment) if target else None  # "./" at the top names no document


def normalise_path(path: str) -> str:
    """A path or URL in the form links and documents are matched in ("" stays "").

    URLs: scheme and host lowercased, path folded, query and fragment dropped.
    """
    if is_url(path):
        parts = urlsplit(path)
        folded = _fold(unquote(parts.path)) if parts.path else ""
        return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), folded, "", ""))
    return _fold(unquote(path.strip().replace("\\", "/")))


def path_stem(path: str) -> str:
    """`path` without up to two document suffixes ("library/os.rst.txt" -> "library/os")."""
    stem = path
    for _ in range(2):
        lowered = stem.lower()
        suffix = next((s for s in DOCUMENT_SUFFIXES if lowered.endswith(s)), "")
        if not suffix or len(suffix) == len(stem):
            break
        stem = stem[: -len(suffix)]
    return stem


def is_url(path: str) -> bool:
    """True for an absolute http(s) URL."""
    return urlsplit(path).scheme.lower() in _WEB_SCHEMES and "://" in path


def _fold(path: str) -> str:
    if not path:
        return ""
    folded = posixpath.normpath(path)
    if path.startswith("/") and not folded.startswith("/"):
        folded = "/" + folded
    if folded.startswith("//"):  # normpath keeps a leading "//"
        folded = "/" + folded.lstrip("/")
    return "" if folded == "." else folded
