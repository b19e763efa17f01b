"""Resolve stored link rows to their target chunks, in bulk: a few queries per batch of links.

A link's target document is the one whose normalised source path equals the link target, else
whose id equals it (also without a leading "/"), else whose path, then id, equals it without the
document suffix (".html", ".md", ...); ties go to the smallest document id. A link with an empty
target points into its own document. In the target document, a fragment naming a section anchor
(`anchors.fragment_candidates`, most literal first) leads to the first chunk (by ordinal) of that
section, weighing `SECTION_LINK_WEIGHT`; otherwise the link leads to the document's first chunk,
weighing `DOCUMENT_LINK_WEIGHT`. Self-links are left out.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from functools import lru_cache

from core.ingest.anchors import fragment_candidates
from core.ingest.link_targets import path_stem

SECTION_LINK_WEIGHT = 1.0
"""A link whose fragment names a section of the target: the author pointed at that passage."""
DOCUMENT_LINK_WEIGHT = 0.7
"""A link to a whole document (or to an anchor no section has): its first chunk."""

PATH, ID, PATH_STEM, ID_STEM = range(4)
"""Ranks of a document's lookup keys in `document_keys`, best match first."""

LinkRow = tuple[int, str, str, str]
"""A stored link: (source row id, the source's document id, target, fragment)."""

_BATCH = 400  # bound parameters per IN (...) list
_candidates = lru_cache(maxsize=1 << 16)(fragment_candidates)  # fragments repeat a lot


class LinkResolver:
    """Resolves link rows against one connection; caches lookups for the life of one read."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._documents: dict[str, str | None] = {}  # link target -> document id
        self._first: dict[str, int | None] = {}  # document id -> row id of its first chunk
        self._anchors: dict[tuple[str, str], int] = {}  # (document id, slug) -> first row id
        self._searched: set[tuple[str, str]] = set()  # (document id, slug) pairs looked up

    def link_edges(self, rows: Sequence[LinkRow]) -> list[tuple[int, int, float]]:
        """(source row id, target row id, weight) of each link that resolves, in row order."""
        self._load_documents({target for _, _, target, _ in rows if target})
        found = [
            (int(row_id), document, _candidates(fragment))
            for row_id, source_document, target, fragment in rows
            if (document := self._documents[target] if target else source_document) is not None
        ]
        self._load_anchors({(d, slug) for _, d, slugs in found for slug in slugs})
        self._load_first({document for _, document, _ in found})
        edges: list[tuple[int, int, float]] = []
        for row_id, document, slugs in found:
            resolved = self._target(document, slugs)
            if resolved is not None and resolved[0] != row_id:
                edges.append((row_id, *resolved))
        return edges

    def _target(self, document: str, slugs: tuple[str, ...]) -> tuple[int, float] | None:
        for slug in slugs:
            if (document, slug) in self._anchors:
                return self._anchors[document, slug], SECTION_LINK_WEIGHT
        first = self._first.get(document)
        return None if first is None else (first, DOCUMENT_LINK_WEIGHT)

    def _load_documents(self, targets: Iterable[str]) -> None:
        missing = [target for target in targets if target not in self._documents]
        wanted = {key for target in missing for key, _ in _lookups(target)}
        matches: dict[str, list[tuple[int, str]]] = {}
        for batch in _batches(sorted(wanted)):
            marks = ", ".join("?" * len(batch))
            sql = f"SELECT key, rank, document_id FROM document_keys WHERE key IN ({marks})"
            for key, rank, document in self._db.execute(sql, batch):
                matches.setdefault(str(key), []).append((int(rank), str(document)))
        for target in missing:
            candidates = [
                match
                for key, ranks in _lookups(target)
                for match in matches.get(key, ())
                if match[0] in ranks
            ]
            self._documents[target] = min(candidates)[1] if candidates else None

    def _load_anchors(self, pairs: set[tuple[str, str]]) -> None:
        missing = pairs - self._searched
        self._searched |= missing
        documents = sorted({document for document, _ in missing})
        slugs = sorted({slug for _, slug in missing})
        for batch in _batches(documents):
            sql = (
                f"SELECT document_id, slug, row_id FROM chunk_anchors "
                f"WHERE document_id IN ({', '.join('?' * len(batch))}) "
                f"AND slug IN ({', '.join('?' * len(slugs))}) ORDER BY ordinal DESC"
            )
            for document, slug, row_id in self._db.execute(sql, [*batch, *slugs]):
                self._anchors[str(document), str(slug)] = int(row_id)  # lowest ordinal last

    def _load_first(self, documents: set[str]) -> None:
        missing = sorted(documents - self._first.keys())
        for document in missing:
            self._first[document] = None
        for batch in _batches(missing):
            sql = (
                "SELECT document_id, row_id, MIN(ordinal) FROM chunks "
                f"WHERE document_id IN ({', '.join('?' * len(batch))}) GROUP BY document_id"
            )
            for document, row_id, _ in self._db.execute(sql, batch):
                self._first[str(document)] = int(row_id)


def _lookups(target: str) -> list[tuple[str, tuple[int, ...]]]:
    """The keys a link target is looked up by, with the key ranks each may match."""
    stem = path_stem(target)
    return [
        (target, (PATH, ID)),
        (target.lstrip("/"), (ID,)),
        (stem, (PATH_STEM, ID_STEM)),
        (stem.lstrip("/"), (ID_STEM,)),
    ]


def _batches(items: Sequence[str]) -> list[Sequence[str]]:
    return [items[start : start + _BATCH] for start in range(0, len(items), _BATCH)]
