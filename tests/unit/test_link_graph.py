"""The link graph in a real SqliteStore: links resolved to sections and documents (also when the
target arrives later), adjacency, replacement and deletion, counting, ordering and durability."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from core.ingest.chunking_spec import ChunkerKind, ChunkingSpec
from core.ingest.document_chunker import chunk_any
from core.ingest.link_rows import document_link_rows
from core.models import Chunk, Document, Edge, EdgeKind, SourceType
from core.store import SqliteStore
from core.store.link_graph import ADJACENT_WEIGHT, DOCUMENT_LINK_WEIGHT, SECTION_LINK_WEIGHT
from tests.unit.python_doc_pages import LIBRARY_FAQ_HTML, OS_PAGE, PROGRAMMING_FAQ, SHUTIL_PAGE

CountTokens = Callable[[str], int]
SPEC = ChunkingSpec(ChunkerKind.STRUCTURE, 40)

FAQ = Document(
    "faq/library.html", LIBRARY_FAQ_HTML, SourceType.HTML, source_path="docs/faq/library.html"
)
OS = Document("library/os.md", OS_PAGE, source_path="docs/library/os.md")
SHUTIL = Document(
    "library/shutil.html", SHUTIL_PAGE, SourceType.HTML, source_path="docs/library/shutil.html"
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore.open(tmp_path / "store.sqlite3")
    yield opened
    opened.close()


@pytest.fixture
def ingest(store: SqliteStore, count_words: CountTokens) -> Callable[[Document], list[Chunk]]:
    def write(document: Document) -> list[Chunk]:
        drafts = [c.draft for c in chunk_any(document, b"", SPEC, count_words)]
        vectors = np.random.default_rng(7).standard_normal((len(drafts), 4)).astype(np.float32)
        links = document_link_rows(document, drafts)
        store.upsert_document(document, document.content_hash(), drafts, vectors, links=links)
        stored = store.get_document(document.document_id)
        assert stored is not None
        return stored.chunks

    return write


def row(chunks: list[Chunk], snippet: str) -> int:
    """The row id of the one chunk whose text contains `snippet`."""
    (found,) = [c.row_id for c in chunks if snippet in c.text]
    return found


def link(source: int, target: int, weight: float) -> Edge:
    return Edge(source, target, EdgeKind.LINK, weight)


def test_links_resolve_to_the_section_their_fragment_names(
    store: SqliteStore, ingest: Callable[[Document], list[Chunk]]
) -> None:
    os_chunks = ingest(OS)
    faq = ingest(FAQ)
    delete_question = row(faq, "os.remove(filename)")
    getcwd = row(os_chunks, "current working directory")

    edges = store.edges_from([delete_question])

    # os.getcwd -> its section; module-os, os.rmdir and os.mkdir fall back to the first chunk
    assert edges == {
        delete_question: [
            link(delete_question, getcwd, SECTION_LINK_WEIGHT),
            link(delete_question, os_chunks[0].row_id, DOCUMENT_LINK_WEIGHT),
        ]
    }


def test_a_fragment_link_within_a_page_reaches_that_section(
    store: SqliteStore, ingest: Callable[[Document], list[Chunk]]
) -> None:
    faq = ingest(FAQ)
    copy_question = row(faq, "copyfile()")

    edges = store.edges_from([copy_question])[copy_question]

    # the same-page link; shutil is not stored and python.org is external: no edges
    assert edges == [link(copy_question, row(faq, "os.remove(filename)"), SECTION_LINK_WEIGHT)]


def test_a_link_to_a_document_ingested_later_resolves_once_it_is_stored(
    store: SqliteStore, ingest: Callable[[Document], list[Chunk]]
) -> None:
    faq = ingest(FAQ)
    copy_question = row(faq, "copyfile()")
    before = store.edges_from([copy_question])[copy_question]

    shutil = ingest(SHUTIL)
    after = store.edges_from([copy_question])[copy_question]

    assert before == [link(copy_question, row(faq, "os.remove(filename)"), SECTION_LINK_WEIGHT)]
    assert after == [
        *before,
        link(copy_question, row(shutil, "Copy the contents"), SECTION_LINK_WEIGHT),
        link(copy_question, shutil[0].row_id, DOCUMENT_LINK_WEIGHT),
    ]


def test_replacing_a_target_moves_the_links_to_its_new_chunks(
    store: SqliteStore, ingest: Callable[[Document], list[Chunk]]
) -> None:
    old = ingest(OS)
    faq = ingest(FAQ)
    delete_question = row(faq, "os.remove(filename)")

    new = ingest(Document(OS.document_id, OS.text + "\nNew closing words.\n", OS.source_type,
                          OS.source_path))  # fmt: skip
    targets = {e.target_row_id for e in store.edges_from([delete_question])[delete_question]}

    assert targets == {row(new, "current working directory"), new[0].row_id}
    assert store.edges_from([c.row_id for c in old]) == {}


def test_deleting_a_document_removes_its_edges_both_ways(
    store: SqliteStore, ingest: Callable[[Document], list[Chunk]]
) -> None:
    os_chunks = ingest(OS)
    faq = ingest(FAQ)
    delete_question = row(faq, "os.remove(filename)")
    count_before = store.edge_count()

    store.delete_documents([OS.document_id])

    assert store.edges_from([delete_question]) == {delete_question: []}
    assert store.edges_from([c.row_id for c in os_chunks]) == {}
    # the os page's own link (mkdir -> getcwd section) and the FAQ's two edges into it are gone
    assert store.edge_count() == count_before - 3
    ingest(OS)
    assert len(store.edges_from([delete_question])[delete_question]) == 2
    assert store.edge_count() == count_before  # the count kept per sequence follows every write


def test_consecutive_chunks_of_a_section_are_next_and_prev(
    store: SqliteStore, ingest: Callable[[Document], list[Chunk]]
) -> None:
    chunks = ingest(Document("faq/programming.md", PROGRAMMING_FAQ))
    first_section = [c.row_id for c in chunks if "higher order" in c.section_path[-1]]
    second_section = [c.row_id for c in chunks if "name of an object" in c.section_path[-1]]

    edges = store.edges_from([c.row_id for c in chunks])

    expected: dict[int, list[Edge]] = {}
    for section in (first_section, second_section):
        for index, source in enumerate(section):
            following = section[index + 1 : index + 2]
            preceding = section[max(index - 1, 0) : index]
            expected[source] = [
                *(Edge(source, t, EdgeKind.NEXT, ADJACENT_WEIGHT) for t in following),
                *(Edge(source, t, EdgeKind.PREV, ADJACENT_WEIGHT) for t in preceding),
            ]
    assert len(first_section) > 2 and len(second_section) > 2
    assert edges == expected
    assert store.edge_count() == 2 * (len(first_section) - 1 + len(second_section) - 1)


def test_edge_count_agrees_with_edges_from(
    store: SqliteStore, ingest: Callable[[Document], list[Chunk]]
) -> None:
    rows = [c.row_id for doc in (OS, FAQ, SHUTIL) for c in ingest(doc)]

    edges = store.edges_from(rows)

    assert store.edge_count() == sum(len(found) for found in edges.values()) == 6


def test_edges_are_ordered_by_weight_then_kind_then_target(
    store: SqliteStore, ingest: Callable[[Document], list[Chunk]]
) -> None:
    text = "# Page\n\n" + "\n\n".join(f"Paragraph {i} " + "word " * 30 for i in range(3))
    text += "\n\nSee [top](#page) and [os](library/os.md#os.getcwd) and [faq](faq/library.html)."
    os_chunks = ingest(OS)
    faq = ingest(FAQ)
    page = ingest(Document("page", text, source_path="page.md"))
    last = page[-1].row_id

    edges = store.edges_from([last])[last]

    assert edges == [
        link(last, row(os_chunks, "current working directory"), SECTION_LINK_WEIGHT),
        link(last, page[0].row_id, SECTION_LINK_WEIGHT),
        Edge(last, page[-2].row_id, EdgeKind.PREV, ADJACENT_WEIGHT),
        link(last, faq[0].row_id, DOCUMENT_LINK_WEIGHT),
    ]


def test_unknown_rows_are_absent_and_self_links_are_dropped(
    store: SqliteStore, ingest: Callable[[Document], list[Chunk]]
) -> None:
    (only,) = ingest(Document("alone", "# Alone\n\nThis page links [to itself](#alone)."))

    assert store.edges_from([only.row_id, 999_999]) == {only.row_id: []}
    assert store.edge_count() == 0


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        pytest.param("library/os.html", "os-html", id="exact-path-beats-stem"),
        pytest.param("library/os", "os-html", id="stem-ties-by-document-id"),
        pytest.param("glossary", "glossary", id="document-id"),
        pytest.param("/glossary.html", "glossary", id="root-relative-id-stem"),
    ],
)
def test_link_targets_match_paths_then_ids_then_stems(
    target: str,
    expected: str,
    store: SqliteStore,
    ingest: Callable[[Document], list[Chunk]],
) -> None:
    ingest(Document("os-md", "# os\n\nMarkdown page.", source_path="library/os.md"))
    targets = {
        "os-html": ingest(Document("os-html", "# os\n\nHTML page.", source_path="library/os.html")),
        "glossary": ingest(Document("glossary", "# Glossary\n\nTerms.")),
    }
    (source,) = ingest(Document("source", f"# Source\n\nSee [it]({target}).", source_path="s.md"))

    edges = store.edges_from([source.row_id])[source.row_id]

    assert edges == [link(source.row_id, targets[expected][0].row_id, DOCUMENT_LINK_WEIGHT)]


def test_the_graph_survives_reopening(
    tmp_path: Path, store: SqliteStore, ingest: Callable[[Document], list[Chunk]]
) -> None:
    rows = [c.row_id for doc in (OS, FAQ) for c in ingest(doc)]
    edges = store.edges_from(rows)
    store.close()

    with SqliteStore.open(tmp_path / "store.sqlite3") as reopened:
        assert reopened.edges_from(rows) == edges
