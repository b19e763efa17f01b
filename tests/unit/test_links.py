"""Tests of link extraction, link target resolution and section anchors."""

from __future__ import annotations

import pytest

from core.ingest.anchors import chunk_anchors, fragment_candidates, github_slug, sphinx_slug
from core.ingest.html_parser import html_to_markdown
from core.ingest.link_targets import Link, normalise_path, path_stem, resolve_link
from core.ingest.links import ChunkLinks, document_links, extract_links, reference_definitions
from core.models import ChunkDraft, Document, SourceType
from tests.unit.python_doc_pages import LIBRARY_FAQ_HTML

FAQ_PATH = "docs/faq/library.html"


@pytest.mark.parametrize(
    ("destination", "base", "expected"),
    [
        pytest.param("../library/os.html#os.getcwd", FAQ_PATH,
                     Link("docs/library/os.html", "os.getcwd"), id="parent"),
        pytest.param("./shutil.html", "docs/library/os.html",
                     Link("docs/library/shutil.html"), id="dot"),
        pytest.param("shutil.html?highlight=copy#copyfile", "docs/library/os.html",
                     Link("docs/library/shutil.html", "copyfile"), id="query-dropped"),
        pytest.param("/library/os.html", FAQ_PATH, Link("/library/os.html"), id="root"),
        pytest.param("#how-do-i-copy-a-file", FAQ_PATH, Link("", "how-do-i-copy-a-file"),
                     id="same-page"),
        pytest.param("file%20name.md#Caf%C3%A9", "notes/index.md",
                     Link("notes/file name.md", "Café"), id="percent-decoded"),
        pytest.param("../library/os.html#os.getcwd", "https://docs.python.org/3/faq/library.html",
                     Link("https://docs.python.org/3/library/os.html", "os.getcwd"),
                     id="url-base"),
        pytest.param("../library/os.html", "C:\\docs\\faq\\library.html",
                     Link("C:/docs/library/os.html"), id="windows-base"),
        pytest.param("https://docs.python.org/3/library/os.html#os.getcwd", FAQ_PATH,
                     Link("https://docs.python.org/3/library/os.html", "os.getcwd", True),
                     id="https"),
        pytest.param("mailto:docs@python.org", FAQ_PATH, Link("mailto:docs@python.org", "", True),
                     id="mailto"),
        pytest.param("//cdn.example/x.js", FAQ_PATH, Link("//cdn.example/x.js", "", True),
                     id="protocol-relative"),
    ],
)  # fmt: skip
def test_resolve_link(destination: str, base: str, expected: Link) -> None:
    assert resolve_link(destination, base) == expected


@pytest.mark.parametrize(
    ("destination", "base"),
    [("", FAQ_PATH), ("  ", FAQ_PATH), ("?page=2", FAQ_PATH), ("./", "index.md")],
    ids=["empty", "blank", "query", "top-directory"],
)
def test_destinations_naming_no_document_are_no_link(destination: str, base: str) -> None:
    assert resolve_link(destination, base) is None


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("./docs//library/../library/os.html", "docs/library/os.html"),
        ("/srv/docs/faq/../library/os.html", "/srv/docs/library/os.html"),
        ("HTTPS://Docs.Python.org/3/faq/../library/os.html?x=1#y", "https://docs.python.org/3/library/os.html"),
        ("", ""),
    ],
)  # fmt: skip
def test_normalise_path(path: str, expected: str) -> None:
    assert normalise_path(path) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("library/os.html", "library/os"),
        ("faq/programming.rst.txt", "faq/programming"),
        ("README.md", "README"),
        ("library/os", "library/os"),
        (".md", ".md"),
        ("archive.tar.gz", "archive.tar.gz"),
    ],
)
def test_path_stem(path: str, expected: str) -> None:
    assert path_stem(path) == expected


MARKDOWN = """\
See [os.getcwd()](../library/os.html#os.getcwd "Current directory") and
[`shutil`](<shutil module.html>) or [the FAQ][faq] and [Installing] and [Installing][].
Read <https://docs.python.org/3/> too; ![logo](img/logo.png) is an image.
Code is not a link: `a[0](b)` and `[x](nope.md)`; neither is [undefined] or [x]().

```python
handlers[0](event)  # [not](a-link.md)
```

[FAQ]: ../faq/programming.html#how-do-i-copy-a-file
[installing]: <../installing/index.html>
[^1]: A footnote, not a link.
"""


def test_extract_links_in_order_of_appearance() -> None:
    links = extract_links(MARKDOWN, "docs/library/filesys.md")

    assert links == [
        Link("docs/library/os.html", "os.getcwd"),
        Link("docs/library/shutil module.html"),
        Link("docs/faq/programming.html", "how-do-i-copy-a-file"),
        Link("docs/installing/index.html"),
        Link("docs/installing/index.html"),
        Link("https://docs.python.org/3/", "", external=True),
    ]


def test_reference_definitions_are_case_insensitive_and_skip_footnotes() -> None:
    assert reference_definitions(MARKDOWN) == {
        "faq": "../faq/programming.html#how-do-i-copy-a-file",
        "installing": "../installing/index.html",
    }


def test_html_links_arrive_as_markdown_links() -> None:
    markdown = html_to_markdown(LIBRARY_FAQ_HTML)

    links = extract_links(markdown, FAQ_PATH)

    assert links == [
        Link("docs/library/os.html", "module-os"),
        Link("docs/library/os.html", "os.getcwd"),
        Link("docs/library/os.html", "os.rmdir"),
        Link("docs/library/os.html", "os.mkdir"),
        Link("docs/library/shutil.html", "module-shutil"),
        Link("docs/library/shutil.html", "directory-and-files-operations"),
        Link("", "how-do-i-delete-a-file-and-other-basic-file-questions"),
        Link("https://docs.python.org/3/library/filesys.html", "", external=True),
    ]


def test_document_links_use_definitions_from_other_chunks_and_drop_external_links() -> None:
    text = "# Guide\n\nSee [the FAQ][faq] and [os](os.md) and [os again](os.md).\n\n[faq]: faq.md\n"
    document = Document("guide", text, SourceType.MARKDOWN, source_path="docs/guide.md")
    chunks = [
        ChunkDraft("See [the FAQ][faq] and [os](os.md) and [os again](os.md).", ("Guide",)),
        ChunkDraft("Online: <https://python.org> and [faq].", ("Guide", "More")),
    ]

    assert document_links(document, chunks) == [
        ChunkLinks((Link("docs/faq.md"), Link("docs/os.md")), ("guide",)),
        ChunkLinks((Link("docs/faq.md"),), ("guide", "more")),
    ]


def test_links_resolve_against_the_document_id_without_a_source_path() -> None:
    document = Document("faq/library.md", "[os](../library/os.md)")

    graph = document_links(document, [ChunkDraft("[os](../library/os.md)")])

    assert graph == [ChunkLinks((Link("library/os.md"),), ())]


@pytest.mark.parametrize(
    ("heading", "github", "sphinx"),
    [
        ("How do I copy a file?", "how-do-i-copy-a-file", "how-do-i-copy-a-file"),
        ("How do I delete a file? (And other basic file questions…)¶",
         "how-do-i-delete-a-file-and-other-basic-file-questions",
         "how-do-i-delete-a-file-and-other-basic-file-questions"),
        ("os.getcwd()", "osgetcwd", "os-getcwd"),
        ("3. Data model", "3-data-model", "data-model"),
        ("`__init__` and [super()](functions.html#super)", "__init__-and-super", "init-and-super"),
        ("Café crème", "café-crème", "cafe-creme"),
    ],
)  # fmt: skip
def test_heading_slugs(heading: str, github: str, sphinx: str) -> None:
    assert (github_slug(heading), sphinx_slug(heading)) == (github, sphinx)


def test_chunk_anchors_come_from_the_section_path_and_headings_outside_code() -> None:
    text = "## os.getcwd()\n\nReturn the directory.\n\n```python\n# not a heading\n```\n"

    anchors = chunk_anchors(("os", "Files and Directories"), text)

    assert anchors == ("files-and-directories", "os", "os-getcwd", "osgetcwd")


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        ("os.getcwd", ("os.getcwd", "osgetcwd", "os-getcwd")),
        ("How-Do-I", ("How-Do-I", "how-do-i")),
        ("caf%C3%A9", ("café", "cafe")),
        ("", ()),
    ],
)
def test_fragment_candidates(fragment: str, expected: tuple[str, ...]) -> None:
    assert fragment_candidates(fragment) == expected
