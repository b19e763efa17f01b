"""benchmarks/quality/build_man_pages: rendered pages split into Markdown, NAME summaries asked."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from benchmarks.quality.build_man_pages import (
    MAX_TEXT,
    ManPage,
    askable,
    pages,
    parse,
    write_packages,
    write_set,
)

_LS = """LS(1)                     User Commands                     LS(1)

NAME
       ls - list directory contents

SYNOPSIS
       ls [OPTION]... [FILE]...

DESCRIPTION
       List information about the FILEs (the current directory by default).

       -a, --all
              do not ignore entries starting with .

   Exit status:
       0      if OK,

SEE ALSO
       Full documentation <https://www.gnu.org/software/coreutils/ls>

GNU coreutils 9.1                  September 2022                    LS(1)
"""


def _page(name: str, summary: str, body: str = "Prints what it is asked to print. " * 8) -> str:
    return (
        f"{name.upper()}(1)   User Commands   {name.upper()}(1)\n\nNAME\n       {name} - {summary}"
        f"\n\nDESCRIPTION\n       {body}\n\nfooter 1.0   2022   {name.upper()}(1)\n"
    )


def test_parse_keeps_sections_as_markdown_without_name() -> None:
    page = parse("ls.1", "ls(1)", _LS)
    assert page is not None
    assert page.summary == "list directory contents"
    assert page.title == "ls(1)"
    assert "NAME" not in page.text and "list directory contents" not in page.text
    assert page.text.startswith("## SYNOPSIS\n\nls [OPTION]... [FILE]...\n\n## DESCRIPTION")
    assert "### Exit status:" in page.text
    assert "-a, --all\n       do not ignore" in page.text  # option bodies keep their indent
    assert "GNU coreutils" not in page.text and "User Commands" not in page.text


def test_parse_refuses_pages_without_a_summary() -> None:
    assert parse("x.1", "x(1)", _LS.replace("ls - list directory contents", "ls")) is None
    assert parse("x.1", "x(1)", "X(1)\n\nDESCRIPTION\n       text\nfooter\n") is None
    assert parse("x.1", "x(1)", "") is None


def test_long_pages_are_cut_on_a_line_break() -> None:
    body = "\n       ".join(f"line {i} " + "word " * 20 for i in range(200))
    page = parse("big.1", "big(1)", _page("big", "a very big page", body))
    assert page is not None
    assert len(page.text) <= MAX_TEXT
    assert page.text.endswith("word")


def _man_tree(tmp_path: Path, rendered: dict[str, str]) -> Path:
    """man1/ holding each page gzipped as `man` renders it (`_rendered` reads it back, standing
    in for man, which may not be installed where the tests run)."""
    root = tmp_path / "man"
    (root / "man1").mkdir(parents=True)
    for file_name, text in rendered.items():
        with gzip.open(root / "man1" / file_name, "wt", encoding="utf-8") as handle:
            handle.write(text)
    return root


def _rendered(path: Path) -> str:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return handle.read()


def test_pages_skip_links_duplicates_excluded_and_short_pages(tmp_path: Path) -> None:
    rendered = {
        "ls.1.gz": _LS,
        # another manual with the same summary: kept, neither asked
        "dir.1.gz": _LS.replace("ls -", "dir -").replace("List", "List, in columns,"),
        "alias.1.gz": _LS.replace("LS(1)", "ALIAS(1)"),  # header and footer differ: a duplicate
        "gcloud-x.1.gz": _page("gcloud-x", "a cloud command"),
        "tiny.1.gz": _page("tiny", "a page too short to keep", "short"),
        "sort.1.gz": _page("sort", "sort lines of text files"),
    }
    root = _man_tree(tmp_path, rendered)
    (root / "man1" / "link.1.gz").symlink_to(root / "man1" / "sort.1.gz")
    kept = pages(root, ["1"], ["gcloud"], _rendered)
    assert [page.doc_id for page in kept] == ["alias.1", "dir.1", "sort.1"]  # ls: alias's twin
    assert [page.doc_id for page in askable(kept)] == ["sort.1"]


def test_write_set_asks_unique_summaries_in_corpus_order(tmp_path: Path) -> None:
    rendered = {
        f"tool{i}.1.gz": _page(f"tool{i}", f"does thing number {i} well", f"Tool {i}. " * 40)
        for i in range(6)
    }
    rendered["two.1.gz"] = _page("two", "two words")
    root = _man_tree(tmp_path, rendered)
    corpus = pages(root, ["1"], [], _rendered)
    out = tmp_path / "set"
    assert write_set(corpus, 4, out) == {"documents": 7, "askable": 6, "queries": 4}
    docs = [json.loads(line) for line in (out / "corpus.jsonl").open()]
    queries = [json.loads(line) for line in (out / "queries.jsonl").open()]
    qrels = (out / "qrels" / "test.tsv").read_text().splitlines()
    assert docs[0]["title"] == "tool0(1)" and docs[0]["text"].startswith("## DESCRIPTION")
    assert [q["_id"] for q in queries] == ["q1", "q2", "q3", "q4"]
    asked = [line.split("\t")[1] for line in qrels[1:]]
    assert asked == sorted(asked)
    for query, doc_id in zip(queries, asked, strict=True):
        number = doc_id.removeprefix("tool").removesuffix(".1")
        assert query["text"] == f"does thing number {number} well"
    assert write_set(corpus, 4, tmp_path / "again") == write_set(corpus, 4, out)
    assert (tmp_path / "again" / "queries.jsonl").read_text() == (out / "queries.jsonl").read_text()


def test_packages_are_read_from_dpkg_without_diversions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "dpkg").write_text(
        "#!/bin/sh\n"
        "echo 'diversion by linux-perf from: /m/man1/perf.1.gz'\n"
        "echo 'linux-perf: /m/man1/perf.1.gz'\n"
        "echo 'coreutils: /m/man1/ls.1.gz'\n"
        "echo 'coreutils: /m/man1/dir.1.gz'\n"
    )
    (tools / "dpkg-query").write_text("#!/bin/sh\nprintf '1.0-%s' \"$3\"\n")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    corpus = [ManPage(doc_id, "", "", "") for doc_id in ("perf.1", "ls.1", "dir.1")]
    assert write_packages(corpus, Path("/m"), tmp_path) == 2
    assert (tmp_path / "packages.tsv").read_text().splitlines() == [
        "package\tversion\tpages",
        "coreutils\t1.0-coreutils\t2",
        "linux-perf\t1.0-linux-perf\t1",
    ]
