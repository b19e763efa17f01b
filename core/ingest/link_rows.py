"""The link-graph rows of a document (`DocumentLinks`), extracted before it is written.

Keys: what a link elsewhere may name this document by (source path, id, and both without their
suffix; ranks as `core.store.link_resolver` matches them). Per chunk: its internal links
(`core.ingest.links`, external ones dropped, repeats once) and its anchor slugs.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.ingest.link_targets import normalise_path, path_stem
from core.ingest.links import document_links
from core.models import ChunkDraft, Document
from core.store.link_resolver import ID, ID_STEM, PATH, PATH_STEM
from core.store.records import DocumentLinks


def document_link_rows(document: Document, chunks: Sequence[ChunkDraft]) -> DocumentLinks:
    """Keys of `document` and the links and anchors of each of its `chunks` (by ordinal)."""
    graph = document_links(document, chunks)
    return DocumentLinks(
        keys=tuple(document_keys(document)),
        links=tuple(tuple((link.target, link.fragment) for link in c.links) for c in graph),
        anchors=tuple(c.anchors for c in graph),
    )


def document_keys(document: Document) -> list[tuple[int, str]]:
    """(rank, key) pairs a link target is matched against, best rank first."""
    path = normalise_path(document.source_path)
    identifier = document.document_id
    keys = [(PATH, path), (ID, identifier), (PATH_STEM, path_stem(path))]
    keys.append((ID_STEM, path_stem(normalise_path(identifier))))
    return [(rank, key) for rank, key in keys if key]
