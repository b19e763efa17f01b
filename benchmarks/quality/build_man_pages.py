"""Build the man-pages labelled set (BEIR layout) from installed Unix manual pages.

A set of another shape than the three FAQ sets: whole command and file-format manuals, long and
structured (SYNOPSIS, DESCRIPTION, OPTIONS, EXAMPLES ...), found by the one-line summary of their
NAME section, the way someone who knows what a tool does but not its name looks for it.

- Corpus: every page of the chosen sections (default 1, 5, 7, 8) under `man_root`, rendered by
  `man` (groff) to plain text, the NAME section left out. `title` is the page ("ls(1)"), `text`
  the other sections as Markdown (`## HEADING`, sub-headings `### `), cut at `MAX_TEXT`
  characters on a line break. Symbolic links, pages whose text repeats another's, pages
  without a "name - summary" NAME line and pages under `MIN_TEXT` characters are left out, and so
  are pages whose name starts with an `--exclude` prefix.
- Queries: the NAME summaries ("list directory contents") of `--queries` pages drawn at random
  (fixed seed) among those whose summary has at least three words and no other page's summary is
  the same (case and spacing ignored: `dir` and `ls` both "list directory contents" are ambiguous,
  neither is asked).
- qrels: one relevant document per query, its own page.
- packages.tsv: the Debian packages (and versions) the kept pages came from, read from dpkg.

Run (man and groff installed; the pages are whatever the packages on the machine installed):
    python -m benchmarks.quality.build_man_pages /usr/share/man benchmarks/data/man-pages \
        --exclude gcloud
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

MAX_TEXT = 6000
MIN_TEXT = 200
MIN_QUERY_WORDS = 3
SEED = 13
_HEADING = re.compile(r"^[A-Z][A-Z0-9 ,/&'()-]*$")
_SUMMARY = re.compile(r"\s+(?:-|\\-|—|--)\s+")
_PAGE = re.compile(r"^(?P<name>.+)\.(?P<section>[1-9][a-z0-9]*)\.gz$")


@dataclass(frozen=True, slots=True)
class ManPage:
    """One rendered page: its id, title, NAME summary and Markdown body (NAME left out)."""

    doc_id: str
    title: str
    summary: str
    text: str


def render(path: Path) -> str:
    """The page as plain text: `man` with one line per paragraph, no hyphenation or justification,
    backspace overstrikes removed by `col -bx`; "" when man cannot render it."""
    env = {**os.environ, "MANWIDTH": "1000", "LC_ALL": "C.UTF-8", "MAN_KEEP_FORMATTING": ""}
    shown = subprocess.run(
        ["man", "--nh", "--nj", "-l", str(path)], capture_output=True, env=env, check=False
    )
    if shown.returncode != 0:
        return ""
    plain = subprocess.run(
        ["col", "-bx"], input=shown.stdout, capture_output=True, env=env, check=False
    )
    return plain.stdout.decode("utf-8", errors="replace")


def parse(doc_id: str, title: str, rendered: str) -> ManPage | None:
    """`rendered` (man's plain text) split into its sections; None without a NAME summary."""
    lines = rendered.splitlines()
    if len(lines) < 3:
        return None
    sections: list[tuple[str, list[str]]] = []
    for line in lines[1:-1]:  # the first and last lines are the page's header and footer
        stripped = line.rstrip()
        if stripped and not stripped[0].isspace() and _HEADING.match(stripped):
            sections.append((stripped, []))
        elif sections:
            sections[-1][1].append(stripped)
    name = next((body for heading, body in sections if heading == "NAME"), None)
    if name is None:
        return None
    parts = _SUMMARY.split(" ".join(part.strip() for part in name if part.strip()), maxsplit=1)
    if len(parts) != 2 or not parts[1].strip():
        return None
    text = _markdown([(heading, body) for heading, body in sections if heading != "NAME"])
    return ManPage(doc_id, title, parts[1].strip(), _cut(text, MAX_TEXT))


def _markdown(sections: Sequence[tuple[str, list[str]]]) -> str:
    blocks: list[str] = []
    for heading, body in sections:
        lines = [f"## {heading}", ""]
        for line in body:
            indent = len(line) - len(line.lstrip(" "))
            if indent == 3 and line.strip() and not line.strip().startswith("-"):
                lines.append(f"### {line.strip()}")  # man's sub-heading (.SS) indent
            else:
                lines.append(line[min(indent, 7) :])
        blocks.append(re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip())
    return "\n\n".join(blocks)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    end = text.rfind("\n", 0, limit)
    return text[: end if end > 0 else limit].rstrip()


def pages(
    man_root: Path,
    sections: Iterable[str],
    exclude: Sequence[str],
    renderer: Callable[[Path], str] = render,
) -> list[ManPage]:
    """The kept pages of `sections` under `man_root`, sorted by id; a text met twice kept once."""
    files: list[tuple[Path, str, str]] = []
    for section in sections:
        for path in sorted((man_root / f"man{section}").glob("*.gz")):
            match = _PAGE.match(path.name)
            if path.is_symlink() or match is None or match["name"].startswith(tuple(exclude)):
                continue
            files.append((path, f"{match['name']}.{match['section']}", match["name"]))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        rendered = list(pool.map(renderer, [path for path, _, _ in files]))
    kept: list[ManPage] = []
    seen: set[str] = set()
    for (_, doc_id, name), text in zip(files, rendered, strict=True):
        page = parse(doc_id, f"{name}({doc_id.rsplit('.', 1)[1]})", text)
        if page is None or len(page.text) < MIN_TEXT:
            continue
        digest = hashlib.sha256(page.text.encode()).hexdigest()
        if digest not in seen:  # the same manual under another name is kept once (the first)
            seen.add(digest)
            kept.append(page)
    return sorted(kept, key=lambda page: page.doc_id)


def askable(corpus: Sequence[ManPage]) -> list[ManPage]:
    """Pages whose summary can be a query: three words or more, no other page's summary equal."""
    key = [" ".join(page.summary.casefold().split()) for page in corpus]
    counts: dict[str, int] = {}
    for summary in key:
        counts[summary] = counts.get(summary, 0) + 1
    return [
        page
        for page, summary in zip(corpus, key, strict=True)
        if counts[summary] == 1 and len(summary.split()) >= MIN_QUERY_WORDS
    ]


def write_set(corpus: Sequence[ManPage], queries: int, out: Path) -> dict[str, int]:
    """`out`/corpus.jsonl, queries.jsonl and qrels/test.tsv; `queries` askable pages drawn with
    a fixed seed, asked in corpus order."""
    candidates = askable(corpus)
    chosen = {
        page.doc_id
        for page in random.Random(SEED).sample(candidates, min(queries, len(candidates)))
    }
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for page in corpus:
            record = {"_id": page.doc_id, "title": page.title, "text": page.text}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    asked = [page for page in corpus if page.doc_id in chosen]
    with (out / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for number, page in enumerate(asked, 1):
            handle.write(json.dumps({"_id": f"q{number}", "text": page.summary}) + "\n")
    with (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for number, page in enumerate(asked, 1):
            handle.write(f"q{number}\t{page.doc_id}\t1\n")
    return {"documents": len(corpus), "askable": len(candidates), "queries": len(asked)}


def write_packages(corpus: Sequence[ManPage], man_root: Path, out: Path) -> int:
    """`out`/packages.tsv: the Debian package (and version) that installed each kept page, with
    its page count, read from dpkg; returns the number of packages (0 without dpkg)."""
    files = [
        str(man_root / f"man{page.doc_id.rsplit('.', 1)[1][0]}" / f"{page.doc_id}.gz")
        for page in corpus
    ]
    try:
        owners = subprocess.run(["dpkg", "-S", *files], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return 0
    counts: dict[str, int] = {}
    for line in owners.stdout.splitlines():
        if line.startswith("diversion by "):  # "diversion by P from/to: PATH": not an owner
            continue
        for package in line.split(": ", 1)[0].split(", "):
            counts[package] = counts.get(package, 0) + 1
    rows = ["package\tversion\tpages"]
    for package, pages_of in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        version = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", package.split(":")[0]],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        rows.append(f"{package}\t{version}\t{pages_of}")
    (out / "packages.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return len(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("man_root", type=Path, help="a man directory holding man1, man5, ...")
    parser.add_argument("out", type=Path)
    parser.add_argument("--sections", default="1,5,7,8", help="comma-separated man sections")
    parser.add_argument("--exclude", action="append", default=[], help="page-name prefix to skip")
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args()
    corpus = pages(args.man_root, args.sections.split(","), args.exclude)
    counts = write_set(corpus, args.queries, args.out)
    print({**counts, "packages": write_packages(corpus, args.man_root, args.out)})


if __name__ == "__main__":
    main()
