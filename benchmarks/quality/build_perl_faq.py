"""Build the perl-faq labelled set (BEIR layout) from the Debian package `perl-doc`.

Same recipe as python-faq (../shared/data/python-faq/README.md), on another documentation set:
the corpus is every section (heading + body, body >= 80 characters) of every POD page under
`/usr/share/perl/<version>/pod/`, split at `=head1`..`=head4`; the queries are the perlfaq1-9
headings that end in "?"; the relevant document of a query is that FAQ section's body without its
heading (its `title` is empty). Historic release notes (`perl5*delta.pod`, `perlhist.pod`) are left
out of the corpus: they answer no question and would only add embedding time.

Run (no network beyond apt):
    cd /tmp && apt-get download perl-doc && dpkg-deb -x perl-doc_*.deb perl-doc
    python -m benchmarks.quality.build_perl_faq /tmp/perl-doc/usr/share/perl/5.36.0/pod \
        benchmarks/data/perl-faq
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.quality.faq_set import FaqSection, write_faq_set

_HEAD = re.compile(r"^=head([1-4])\s+(.*)$")
_COMMAND = re.compile(r"^=(\w+)\s*(.*)$")
_FORMAT = re.compile(r"[A-Z]<<+\s+(.*?)\s+>>+|[A-Z]<([^<>]*)>")
_SKIP = re.compile(r"^perl5\d+delta\.pod$|^perlhist\.pod$")


@dataclass
class Section:
    page: str
    index: int
    heading: str
    lines: list[str]


def plain(text: str) -> str:
    """POD with its formatting codes (C<..>, L<..|..>, E<gt>, nested) reduced to plain text."""
    escapes = {"gt": ">", "lt": "<", "verbar": "|", "sol": "/", "quot": '"', "amp": "&"}
    previous = None
    while previous != text:
        previous = text

        def one(match: re.Match[str]) -> str:
            code = match.group(0)[0]
            inner = match.group(1) if match.group(1) is not None else match.group(2)
            if code == "E":
                return escapes.get(inner, inner if not inner.isdigit() else chr(int(inner)))
            if code == "L":
                return inner.split("|", 1)[0] if "|" in inner else inner.replace('"', "")
            if code in "ZX":
                return ""
            return inner

        text = _FORMAT.sub(one, text)
    return text


def sections(path: Path) -> list[Section]:
    """The page's sections in order; text before the first heading is dropped (NAME lines)."""
    found: list[Section] = []
    current: Section | None = None
    in_pod = True
    skipping = False
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        command = _COMMAND.match(raw)
        if command:
            name = command.group(1)
            if name == "cut":
                in_pod = False
                continue
            in_pod = True
            head = _HEAD.match(raw)
            if head:
                current = Section(path.stem, len(found), plain(head.group(2)).strip(), [])
                found.append(current)
                skipping = False
            elif name in ("begin", "for"):
                skipping = name == "begin"
            elif name == "end":
                skipping = False
            elif name == "item" and current is not None:
                current.lines.append(plain(command.group(2)))
            continue
        if not in_pod or skipping or current is None:
            continue
        current.lines.append(raw if raw.startswith((" ", "\t")) else plain(raw))
    return found


def body_text(section: Section) -> str:
    text = "\n".join(section.lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def build(pod_dir: Path, out: Path) -> dict[str, int]:
    return write_faq_set(_faq_sections(pod_dir), out)


def _faq_sections(pod_dir: Path) -> Iterator[FaqSection]:
    for path in sorted(pod_dir.glob("*.pod")):
        if _SKIP.match(path.name):
            continue
        in_faq = re.fullmatch(r"perlfaq[1-9]", path.stem) is not None
        for section in sections(path):
            doc_id = f"{section.page}#{section.index}"
            yield FaqSection(doc_id, section.heading, body_text(section), in_faq)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pod_dir", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    print(build(args.pod_dir, args.out))


if __name__ == "__main__":
    main()
