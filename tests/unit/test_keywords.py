"""Tests for core.retrieve.keywords: keyword extraction and the BM25 query string."""

from __future__ import annotations

import pytest

from core.lexical.query import sanitize_query
from core.retrieve.keywords import extract_keywords, lexical_query


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Why are Python strings immutable?", ("python", "strings", "immutable")),
        ("How do I use os.path.join?", ("use", "os.path.join")),
        ("What does __init__ do in str.format?", ("__init__", "str.format")),
        ("run it with --dry-run and -v", ("run", "--dry-run", "-v")),
        ("pass **kwargs and *args to g++", ("pass", "**kwargs", "*args", "g++")),
        ("std::vector vs list.index()", ("std::vector", "vs", "list.index")),
        ('the "list comprehension" rules', ("list comprehension", "rules")),
        ("“Best  Practices” for imports", ("best practices", "imports")),
        ('Why no "with" statement?', ("with", "statement")),
        ("Why must 'self' be explicit?", ("self", "explicit")),
        ("Why can’t I use C's onexit()?", ("use", "c", "onexit")),
        ("list, List and LIST", ("list",)),
        ("the *is* operator", ("operator",)),
        ("floating-point error", ("floating-point", "error")),
        ("What is it, and why?", ()),
        ("", ()),
    ],
    ids=[
        "stopwords",
        "dotted",
        "dunder_and_method",
        "flags",
        "star_args_and_gpp",
        "scope_and_call_parens",
        "double_quoted_phrase",
        "curly_quoted_phrase",
        "quoted_stopword_kept",
        "single_quoted_word",
        "contractions_and_possessive",
        "dedupe_case_insensitive",
        "emphasis_is_not_args",
        "hyphenated",
        "only_stopwords",
        "empty",
    ],
)
def test_extract_keywords(query: str, expected: tuple[str, ...]) -> None:
    assert extract_keywords(query) == expected


def test_unbalanced_quote_is_punctuation() -> None:
    assert extract_keywords('say "hello world') == ("say", "hello", "world")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How do I use os.path.join in __init__?", "use os path join init"),
        ('"list comprehension" vs list', "list comprehension vs"),
        ("What is C++ (or c)?", "c"),
        ("What is it?", "what is it"),
        ("AND OR NOT field:value +x -y", "field value x y"),
        ("?!", ""),
    ],
    ids=["code_parts", "phrase_words_deduped", "gpp", "stopwords_only_fallback", "syntax", "none"],
)
def test_lexical_query(query: str, expected: str) -> None:
    assert lexical_query(query, extract_keywords(query)) == expected


@pytest.mark.parametrize(
    "query",
    ["Why does a_tuple[i] += ['item'] raise?", '__import__("x.y.z") ÄÖ ünïcode 3.14', "a:b^2 (c)"],
    ids=["brackets", "unicode", "operators"],
)
def test_lexical_query_survives_sanitising_unchanged(query: str) -> None:
    text = lexical_query(query, extract_keywords(query))
    assert sanitize_query(text, 64) == text
