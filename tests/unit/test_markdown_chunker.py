"""Tests of structure-aware Markdown chunking (`chunk_markdown`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.ingest.markdown_chunker import chunk_markdown
from core.models import ChunkDraft

CountTokens = Callable[[str], int]

# An excerpt in the shape of the Python "Programming FAQ", with a setext title, nested ATX
# headings, fences with info strings (one holding a "# comment" line), a table and indented code.
PYTHON_FAQ = """\
---
title: Programming FAQ
---
Programming FAQ
===============

This page answers common questions about writing Python code.

General Questions
-----------------

## Is there a source code level debugger with breakpoints?

Yes. The pdb module is a simple but adequate console-mode debugger.

```python
import pdb
# Set a breakpoint here
pdb.set_trace()
```

### Are there tools to help find bugs?

| Tool | Checks |
|------|--------|
| Pylint | style and errors |
| Pyflakes | errors only |

## Core Language

### Why am I getting an UnboundLocalError?

It can be a surprise to get the UnboundLocalError in previously working code.

~~~pycon
>>> x = 10
>>> def bar():
...     print(x)
~~~

### What are the rules for local and global variables? ###

Variables only referenced inside a function are implicitly global.

    def foo():
        global x

Performance
-----------

## Empty subsection

# Appendix

See the glossary.
"""


def _summary(chunks: list[ChunkDraft]) -> list[tuple[tuple[str, ...], bool, str]]:
    """(section_path, has_code, first line of text) of each chunk."""
    return [(chunk.section_path, chunk.has_code, chunk.text.split("\n")[0]) for chunk in chunks]


def test_faq_sections_become_chunks_with_heading_paths(count_words: CountTokens) -> None:
    chunks = chunk_markdown(PYTHON_FAQ, 200, count_words)

    faq, general, debugger = (
        "Programming FAQ",
        "General Questions",
        ("Is there a source code level debugger with breakpoints?"),
    )
    core, performance = "Core Language", "Performance"
    assert _summary(chunks) == [
        ((faq,), False, "This page answers common questions about writing Python code."),
        (
            (faq, debugger),
            True,
            "Yes. The pdb module is a simple but adequate console-mode debugger.",
        ),
        ((faq, debugger, "Are there tools to help find bugs?"), False, "| Tool | Checks |"),
        (
            (faq, core, "Why am I getting an UnboundLocalError?"),
            True,
            "It can be a surprise to get the UnboundLocalError in previously working code.",
        ),
        (
            (faq, core, "What are the rules for local and global variables?"),
            True,
            "Variables only referenced inside a function are implicitly global.",
        ),
        (("Appendix",), False, "See the glossary."),
    ]
    assert general not in {part for chunk in chunks for part in chunk.section_path}
    assert performance not in {part for chunk in chunks for part in chunk.section_path}


def test_chunk_text_is_the_body_without_heading_lines(count_words: CountTokens) -> None:
    chunks = chunk_markdown(PYTHON_FAQ, 200, count_words)

    assert chunks[1].text == (
        "Yes. The pdb module is a simple but adequate console-mode debugger.\n\n"
        "```python\nimport pdb\n# Set a breakpoint here\npdb.set_trace()\n```"
    )
    assert chunks[4].text == (
        "Variables only referenced inside a function are implicitly global.\n\n"
        "    def foo():\n        global x"
    )
    assert not any("===" in chunk.text or "title:" in chunk.text for chunk in chunks)
    assert all(chunk.token_estimate == len(chunk.text.split()) for chunk in chunks)


@pytest.mark.parametrize(
    "fence",
    [pytest.param("```", id="backticks"), pytest.param("~~~", id="tildes")],
)
def test_headings_inside_a_fence_are_code(fence: str, count_words: CountTokens) -> None:
    text = f"# Setup\n\n{fence}bash title=install.sh\n# install\npip install x\n{fence}\n"

    assert chunk_markdown(text, 64, count_words) == [
        ChunkDraft(
            text=f"{fence}bash title=install.sh\n# install\npip install x\n{fence}",
            section_path=("Setup",),
            has_code=True,
            token_estimate=8,
        )
    ]


def test_a_fence_closes_only_on_its_own_kind_and_length(count_words: CountTokens) -> None:
    text = "````markdown\n```\n~~~\n# still code\n````\n\n# After\n\ntext"

    chunks = chunk_markdown(text, 64, count_words)

    assert _summary(chunks) == [((), True, "````markdown"), (("After",), False, "text")]
    assert chunks[0].text.endswith("# still code\n````")


def test_an_unclosed_fence_runs_to_the_end(count_words: CountTokens) -> None:
    chunks = chunk_markdown("intro\n\n```\ncode\n# not a heading", 64, count_words)

    assert [chunk.text for chunk in chunks] == ["intro\n\n```\ncode\n# not a heading"]
    assert chunks[0].has_code is True


def test_an_oversized_code_block_stays_whole_in_its_own_chunk(count_words: CountTokens) -> None:
    code = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(20)) + "\n```"
    text = f"# Constants\n\nBefore the code.\n\n{code}\n\nAfter the code."

    chunks = chunk_markdown(text, 32, count_words)

    assert [chunk.text for chunk in chunks] == ["Before the code.", code, "After the code."]
    assert [chunk.has_code for chunk in chunks] == [False, True, False]
    assert chunks[1].token_estimate == 62


def test_a_table_is_never_split(count_words: CountTokens) -> None:
    rows = "\n".join(f"| option{i} | default {i} |" for i in range(10))
    table = f"| Name | Default |\n|---|---|\n{rows}"

    chunks = chunk_markdown(f"Options:\n{table}\nThat is all.", 16, count_words)

    assert [chunk.text for chunk in chunks] == ["Options:", table, "That is all."]


def test_paragraphs_of_a_section_are_packed_up_to_the_budget(count_words: CountTokens) -> None:
    paragraphs = [f"Paragraph {i} has exactly six words." for i in range(5)]
    text = "# Notes\n\n" + "\n\n".join(paragraphs)

    chunks = chunk_markdown(text, 12, count_words)

    assert [chunk.text for chunk in chunks] == [
        f"{paragraphs[0]}\n\n{paragraphs[1]}",
        f"{paragraphs[2]}\n\n{paragraphs[3]}",
        paragraphs[4],
    ]
    assert {chunk.section_path for chunk in chunks} == {("Notes",)}


def test_an_oversized_paragraph_splits_at_sentences_then_words(count_words: CountTokens) -> None:
    long_sentence = "Spam " + " ".join(["spam"] * 9) + "."
    text = f"# Eggs\n\nShort one. {long_sentence} Last one here."

    chunks = chunk_markdown(text, 4, count_words)

    assert [chunk.text for chunk in chunks] == [
        "Short one.",
        "Spam spam spam spam",
        "spam spam spam spam",
        "spam spam.",
        "Last one here.",
    ]


@pytest.mark.parametrize(
    ("text", "expected_paths"),
    [
        pytest.param(
            "# A\n\n## B\n\n### C\n\nx\n\n## D\n\ny",
            [("A", "B", "C"), ("A", "D")],
            id="deeper-replaced",
        ),
        pytest.param("# A\n\n### C\n\nx\n\n# E\n\ny", [("A", "C"), ("E",)], id="skipped-level"),
        pytest.param("A\n===\nx\n\nB\n---\ny", [("A",), ("A", "B")], id="setext"),
        pytest.param("# C# and F# #\n\nx", [("C# and F#",)], id="atx-closing-hashes"),
        pytest.param("#hashtag\n\nx", [()], id="no-space-is-not-a-heading"),
        pytest.param("    # indented\n\nx", [()], id="indented-is-code"),
        pytest.param("x\n\n---\n\ny", [()], id="thematic-break"),
    ],
)
def test_heading_paths(
    text: str, expected_paths: list[tuple[str, ...]], count_words: CountTokens
) -> None:
    paths = [chunk.section_path for chunk in chunk_markdown(text, 1000, count_words)]

    assert paths == expected_paths


@pytest.mark.parametrize(
    ("text", "has_code"),
    [
        pytest.param("Example:\n\n    print('hi')", True, id="indented-after-blank-line"),
        pytest.param("Example:\n    print('hi')", False, id="indented-continuation"),
        pytest.param("Use `print()` inline.", False, id="inline-code"),
    ],
)
def test_indented_code_counts_as_code(text: str, has_code: bool, count_words: CountTokens) -> None:
    assert [chunk.has_code for chunk in chunk_markdown(text, 64, count_words)] == [has_code]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("# Only\n\n## Headings\n", id="headings-only"),
        pytest.param("---\ntitle: x\n---\n", id="front-matter-only"),
    ],
)
def test_empty_sections_give_no_chunk(text: str, count_words: CountTokens) -> None:
    assert chunk_markdown(text, 64, count_words) == []


def test_windows_line_endings(count_words: CountTokens) -> None:
    chunks = chunk_markdown("Title\r\n=====\r\n\r\nBody text.\r\n", 64, count_words)

    assert chunks == [ChunkDraft("Body text.", ("Title",), token_estimate=2)]


@pytest.mark.parametrize("max_tokens", [32, 64, 256])
def test_real_tokenizer_budget_is_respected(
    max_tokens: int, embedder: SentenceTransformerEmbedder
) -> None:
    text = (
        PYTHON_FAQ
        + "\n## Long answer\n\n"
        + " ".join(
            f"Sentence number {i} explains list comprehensions in detail." for i in range(60)
        )
    )

    chunks = chunk_markdown(text, max_tokens, embedder.count_tokens)

    assert chunks[-1].section_path == ("Appendix", "Long answer")
    for chunk in chunks:
        assert chunk.token_estimate == embedder.count_tokens(chunk.text)
        is_table = chunk.text.startswith("|")
        assert chunk.token_estimate <= max_tokens or chunk.has_code or is_table
