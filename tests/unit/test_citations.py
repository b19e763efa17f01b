"""Tests for core.context.citations."""

from __future__ import annotations

import pytest

from core.context.citations import (
    ContextCitation,
    citation_for,
    citation_tag,
    parse_citation_tags,
)
from core.models import Chunk, SourceType, chunk_id_for


def make_chunk(document_id: str, ordinal: int = 0, section: tuple[str, ...] = ()) -> Chunk:
    return Chunk(
        row_id=ordinal + 1,
        chunk_id=chunk_id_for(document_id, ordinal),
        document_id=document_id,
        ordinal=ordinal,
        text="body",
        section_path=section,
        has_code=False,
        token_estimate=1,
        source_type=SourceType.MARKDOWN,
        source_path=f"docs/{document_id}.md",
    )


def test_tag_format_is_exact() -> None:
    assert citation_tag(make_chunk("faq-design", 3)) == "[DOC:faq-design | CHUNK:faq-design#3]"


def test_citation_for_carries_provenance() -> None:
    chunk = make_chunk("guide", 2, ("Intro", "Setup"))
    assert citation_for(chunk) == ContextCitation(
        tag="[DOC:guide | CHUNK:guide#2]",
        document_id="guide",
        chunk_id="guide#2",
        section_path=("Intro", "Setup"),
        source_path="docs/guide.md",
    )


def test_parse_in_order_of_appearance_with_repeats() -> None:
    text = (
        "Use a list [DOC:b | CHUNK:b#1]. Tuples are immutable [DOC:a | CHUNK:a#0] "
        "and hashable [DOC:b | CHUNK:b#1]."
    )
    assert parse_citation_tags(text) == [("b", "b#1"), ("a", "a#0"), ("b", "b#1")]


@pytest.mark.parametrize(
    "document_id",
    ["faq-design", "docs/guide v2.md", "ü-ñ", "a#b", "x:y"],
    ids=["plain", "path_with_space", "unicode", "hash", "colon"],
)
def test_round_trip(document_id: str) -> None:
    chunk = make_chunk(document_id, 12)
    text = f"intro {citation_tag(chunk)} outro"
    assert parse_citation_tags(text) == [(document_id, chunk.chunk_id)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[DOC:a|CHUNK:a#0]", [("a", "a#0")]),
        ("[DOC: a  |  CHUNK: a#0 ]", [("a", "a#0")]),
        ("[DOC:a | CHUNK:a#0][DOC:c | CHUNK:c#9]", [("a", "a#0"), ("c", "c#9")]),
    ],
    ids=["no_spaces", "extra_spaces", "adjacent"],
)
def test_parse_tolerates_spacing(text: str, expected: list[tuple[str, str]]) -> None:
    assert parse_citation_tags(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "no tags here", "[DOC:a]", "[CHUNK:a#0]", "[DOC: | CHUNK:a#0]", "DOC:a | CHUNK:a#0"],
    ids=["empty", "plain", "doc_only", "chunk_only", "empty_doc", "no_brackets"],
)
def test_parse_ignores_non_tags(text: str) -> None:
    assert parse_citation_tags(text) == []
