"""Link-graph edges of a Milvus-backed collection, resolved on read like the SQLite store's.

The rows `core.ingest.link_rows` extracts are stored with the data they belong to: each chunk's
links (target, fragment) and anchor slugs in its chunk entity, each document's lookup keys as
`key:<rank>:<id>` records. They go with their chunk or document, so an edge never points at a
deleted chunk. Resolution follows `core.store.link_resolver` (the same key ranks, fragment
candidates and weights) and `core.store.link_graph` (NEXT/PREV between consecutive chunks of one
section, highest weight per target, the same ordering).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from core.ingest.anchors import fragment_candidates
from core.milvus.filter_expression import string_literal
from core.milvus.queries import query_all
from core.models import Edge, EdgeKind
from core.store.link_graph import ADJACENT_WEIGHT
from core.store.link_resolver import DOCUMENT_LINK_WEIGHT, SECTION_LINK_WEIGHT, _lookups

_KIND_ORDER = {EdgeKind.LINK: 0, EdgeKind.NEXT: 1, EdgeKind.PREV: 2}
_BATCH = 500
_GRAPH_FIELDS = ["row_id", "document_id", "ordinal", "section_path", "links", "anchors"]


class MilvusLinkGraph:
    """Reads link rows from the chunk and records collections and resolves them to edges."""

    def __init__(self, client: Any, chunks: str, records: str) -> None:
        self._client = client
        self._chunks = chunks
        self._records = records

    def edges_from(self, row_ids: Sequence[int]) -> dict[int, list[Edge]]:
        """Outgoing edges of the live chunks among `row_ids` (every live one is a key)."""
        unique = list(dict.fromkeys(int(i) for i in row_ids))
        sources: list[dict[str, Any]] = []
        for start in range(0, len(unique), _BATCH):
            batch = unique[start : start + _BATCH]
            sources += self._client.get(self._chunks, ids=batch, output_fields=_GRAPH_FIELDS)
        return self._edges(sources)

    def edge_count(self) -> int:
        """The number of edges `edges_from` returns over every live chunk."""
        sources = query_all(self._client, self._chunks, "", _GRAPH_FIELDS)
        return sum(len(edges) for edges in self._edges(sources).values())

    def _edges(self, sources: list[dict[str, Any]]) -> dict[int, list[Edge]]:
        chunks_of = self._document_chunks({str(s["document_id"]) for s in sources})
        found: dict[int, dict[tuple[EdgeKind, int], float]] = {}
        for source in sources:
            row_id = int(source["row_id"])
            edges = found.setdefault(row_id, {})
            for kind, target in _adjacent(source, chunks_of[str(source["document_id"])]):
                edges[(kind, target)] = ADJACENT_WEIGHT
        links = [
            (int(s["row_id"]), str(s["document_id"]), str(target), str(fragment))
            for s in sources
            for target, fragment in s["links"] or ()
        ]
        documents = self._resolve_targets({target for _, _, target, _ in links if target})
        wanted = {documents.get(t) for _, _, t, _ in links if t} - {None} - set(chunks_of)
        chunks_of.update(self._document_chunks({d for d in wanted if d is not None}))
        for row_id, own, link_target, fragment in links:
            document = documents.get(link_target) if link_target else own
            if document is None or document not in chunks_of:
                continue
            resolved = _link_target(chunks_of[document], fragment_candidates(fragment))
            if resolved is None or resolved[0] == row_id:
                continue
            key = (EdgeKind.LINK, resolved[0])
            found[row_id][key] = max(resolved[1], found[row_id].get(key, 0.0))
        return {
            source: sorted(
                (Edge(source, target, kind, weight) for (kind, target), weight in edges.items()),
                key=lambda edge: (-edge.weight, _KIND_ORDER[edge.kind], edge.target_row_id),
            )
            for source, edges in sorted(found.items())
        }

    def _document_chunks(self, documents: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """Every chunk of each document (row id, ordinal, section, anchors), by ordinal."""
        found: dict[str, list[dict[str, Any]]] = {d: [] for d in documents}
        names = sorted(found)
        for start in range(0, len(names), _BATCH):
            literals = [string_literal(name) for name in names[start : start + _BATCH]]
            listed = ", ".join(literal for literal in literals if literal is not None)
            if not listed:
                continue
            fields = ["row_id", "document_id", "ordinal", "section_path", "anchors"]
            expression = f"document_id in [{listed}]"
            for entity in query_all(self._client, self._chunks, expression, fields):
                found[str(entity["document_id"])].append(entity)
        for chunks in found.values():
            chunks.sort(key=lambda e: int(e["ordinal"]))
        return found

    def _resolve_targets(self, targets: set[str]) -> dict[str, str | None]:
        """Each link target's document (best key rank, then smallest id), as `LinkResolver`."""
        wanted = sorted({key for target in targets for key, _ in _lookups(target)})
        matches: dict[str, list[tuple[int, str]]] = {}
        for start in range(0, len(wanted), _BATCH):
            literals = [string_literal(key) for key in wanted[start : start + _BATCH]]
            listed = ", ".join(literal for literal in literals if literal is not None)
            if not listed:
                continue
            expression = f'kind == "key" and value in [{listed}]'
            fields = ["value", "document_id", "payload"]
            for entity in query_all(self._client, self._records, expression, fields):
                rank = int(entity["payload"]["rank"])
                matches.setdefault(str(entity["value"]), []).append(
                    (rank, str(entity["document_id"]))
                )
        resolved: dict[str, str | None] = {}
        for target in targets:
            candidates = [
                match
                for key, ranks in _lookups(target)
                for match in matches.get(key, ())
                if match[0] in ranks
            ]
            resolved[target] = min(candidates)[1] if candidates else None
        return resolved


def _adjacent(source: dict[str, Any], chunks: list[dict[str, Any]]) -> list[tuple[EdgeKind, int]]:
    ordinal, section = int(source["ordinal"]), list(source["section_path"])
    edges = []
    for chunk in chunks:
        if list(chunk["section_path"]) != section:
            continue
        if int(chunk["ordinal"]) == ordinal + 1:
            edges.append((EdgeKind.NEXT, int(chunk["row_id"])))
        elif int(chunk["ordinal"]) == ordinal - 1:
            edges.append((EdgeKind.PREV, int(chunk["row_id"])))
    return edges


def _link_target(chunks: list[dict[str, Any]], slugs: tuple[str, ...]) -> tuple[int, float] | None:
    """The first chunk of the section a slug names, else the document's first chunk."""
    for slug in slugs:
        for chunk in chunks:  # by ordinal: the lowest wins
            if slug in (chunk["anchors"] or ()):
                return int(chunk["row_id"]), SECTION_LINK_WEIGHT
    return (int(chunks[0]["row_id"]), DOCUMENT_LINK_WEIGHT) if chunks else None
