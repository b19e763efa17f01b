"""The link graph of a collection: link rows written with a document, edges resolved on read.

Writes (inside the document's upsert transaction): the rows of a `DocumentLinks` extracted
before the write (`core.ingest.link_rows`): the document's lookup keys, each chunk's internal
links (target path and fragment) and the anchor slugs each chunk can be reached by. Nothing is
extracted or resolved at write time, so a link to a document ingested
later resolves as soon as that document is stored, and rows of deleted chunks and documents go
with them (`ON DELETE CASCADE`): an edge can never point at a deleted chunk.

Reads turn those rows into `Edge`s between live chunk row ids:
- LINK: see `link_resolver` (a section the fragment names: `SECTION_LINK_WEIGHT` 1.0; the target
  document's first chunk otherwise: `DOCUMENT_LINK_WEIGHT` 0.7); repeated links between the same
  two chunks count once, with their highest weight.
- NEXT / PREV: between consecutive chunks (by ordinal) of one document with the same section
  path, weighing `ADJACENT_WEIGHT` 0.8.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence

from core.models import Edge, EdgeKind
from core.store.link_resolver import (
    DOCUMENT_LINK_WEIGHT,
    SECTION_LINK_WEIGHT,
    LinkResolver,
    LinkRow,
)
from core.store.records import DocumentLinks

__all__ = [
    "ADJACENT_WEIGHT",
    "DOCUMENT_LINK_WEIGHT",
    "SECTION_LINK_WEIGHT",
    "edge_count",
    "edges_from",
    "write_links",
]

ADJACENT_WEIGHT = 0.8
"""The neighbouring chunk of the same section: usually continues the same thought."""

_KIND_ORDER = {EdgeKind.LINK: 0, EdgeKind.NEXT: 1, EdgeKind.PREV: 2}
_ID_BATCH = 500

_ADJACENT = (
    "SELECT s.row_id, n.row_id, n.ordinal > s.ordinal FROM chunks s JOIN chunks n "
    "ON n.document_id = s.document_id AND n.ordinal IN (s.ordinal - 1, s.ordinal + 1) "
    "AND n.section_path_json = s.section_path_json WHERE s.row_id IN ({})"
)
_LINKS = (
    "SELECT l.row_id, c.document_id, l.target, l.fragment FROM chunk_links l "
    "JOIN chunks c USING (row_id)"
)


def write_links(
    db: sqlite3.Connection, document_id: str, row_ids: Sequence[int], rows: DocumentLinks
) -> None:
    """Record the keys of a document and the links and anchors of its new chunks.

    `row_ids[i]` is the stored row id of the chunk with ordinal i. Run inside the upsert
    transaction, after the document row and the chunks are written.
    """
    if len(rows.links) > len(row_ids) or len(rows.anchors) > len(row_ids):
        raise ValueError(f"link rows for more chunks than the {len(row_ids)} written")
    db.execute("DELETE FROM document_keys WHERE document_id = ?", (document_id,))
    db.executemany(
        "INSERT INTO document_keys (document_id, rank, key) VALUES (?, ?, ?)",
        [(document_id, rank, key) for rank, key in rows.keys],
    )
    db.executemany(
        "INSERT INTO chunk_links (row_id, position, target, fragment) VALUES (?, ?, ?, ?)",
        [
            (row_id, position, target, fragment)
            for row_id, links in zip(row_ids, rows.links, strict=False)
            for position, (target, fragment) in enumerate(links)
        ],
    )
    db.executemany(
        "INSERT INTO chunk_anchors (row_id, document_id, ordinal, slug) VALUES (?, ?, ?, ?)",
        [
            (row_id, document_id, ordinal, slug)
            for ordinal, (row_id, slugs) in enumerate(zip(row_ids, rows.anchors, strict=False))
            for slug in slugs
        ],
    )


def edges_from(db: sqlite3.Connection, row_ids: Sequence[int]) -> dict[int, list[Edge]]:
    """Outgoing edges of the live chunks among `row_ids` (every live one is a key).

    Each list is ordered by weight (highest first), then LINK, NEXT, PREV, then target row id.
    """
    edges: dict[int, dict[tuple[EdgeKind, int], float]] = {}
    unique = list(dict.fromkeys(int(i) for i in row_ids))
    resolver = LinkResolver(db)
    for batch in _batches(unique):
        marks = ", ".join("?" * len(batch))
        for (row_id,) in db.execute(f"SELECT row_id FROM chunks WHERE row_id IN ({marks})", batch):
            edges[int(row_id)] = {}
        for source, target, is_next in db.execute(_ADJACENT.format(marks), batch):
            kind = EdgeKind.NEXT if is_next else EdgeKind.PREV
            edges[int(source)][(kind, int(target))] = ADJACENT_WEIGHT
        links: list[LinkRow] = db.execute(f"{_LINKS} WHERE l.row_id IN ({marks})", batch).fetchall()
        for source, target, weight in resolver.link_edges(links):
            found = edges[source]
            found[(EdgeKind.LINK, target)] = max(weight, found.get((EdgeKind.LINK, target), 0.0))
    return {
        source: sorted(
            (Edge(source, target, kind, weight) for (kind, target), weight in found.items()),
            key=lambda edge: (-edge.weight, _KIND_ORDER[edge.kind], edge.target_row_id),
        )
        for source, found in sorted(edges.items())
    }


def edge_count(db: sqlite3.Connection) -> int:
    """The number of edges `edges_from` would return over every live chunk."""
    adjacent = db.execute(
        "SELECT COUNT(*) FROM chunks a JOIN chunks b ON b.document_id = a.document_id "
        "AND b.ordinal = a.ordinal + 1 AND b.section_path_json = a.section_path_json"
    ).fetchone()[0]
    resolver = LinkResolver(db)
    cursor = db.execute(f"{_LINKS} ORDER BY l.row_id, l.position")
    links, source, targets = 0, -1, set[int]()
    while batch := cursor.fetchmany(_ID_BATCH):
        for row_id, target, _ in resolver.link_edges(batch):  # in source row order
            if row_id != source:
                links, source, targets = links + len(targets), row_id, set()
            targets.add(target)
    return 2 * int(adjacent) + links + len(targets)


def _batches(ids: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), _ID_BATCH):
        yield ids[start : start + _ID_BATCH]
