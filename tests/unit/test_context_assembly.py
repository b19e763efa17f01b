"""Tests for core.context.assembly: exact format, greedy budgeting, truncation, validation."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from core.context.assembly import (
    MIN_TRUNCATION_CHARS,
    TRUNCATION_MARK,
    AssembledContext,
    ContextBudget,
    assemble_context,
)
from core.context.citations import citation_tag
from core.errors import InvalidArgument
from core.models import Chunk, Hit, SourceType, chunk_id_for

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def words(text: str) -> int:
    return len(text.split())


def quarter_chars(text: str) -> int:
    """A tokenizer that is not additive over concatenation: ceil(len / 4) plus 2 specials."""
    return (len(text) + 3) // 4 + 2


def noisy(text: str) -> int:
    """Neither additive nor monotonic in the text length: words plus (length mod 7)."""
    return len(text.split()) + len(text) % 7


def floor_thirds(text: str) -> int:
    """Super-additive at joins (floor(a + b) >= floor(a) + floor(b)): estimates run low."""
    return len(text) // 3


def make_hit(row_id: int, text: str, section: tuple[str, ...] = (), doc: str = "") -> Hit:
    document_id = doc or f"doc{row_id}"
    chunk = Chunk(
        row_id=row_id,
        chunk_id=chunk_id_for(document_id, row_id),
        document_id=document_id,
        ordinal=row_id,
        text=text,
        section_path=section,
        has_code=False,
        token_estimate=words(text),
        source_type=SourceType.MARKDOWN,
        source_path=f"{document_id}.md",
    )
    return Hit(chunk=chunk, rank=row_id, score=1.0 / (row_id + 1))


def prose(rng: random.Random, n_sentences: int) -> str:
    sentences = []
    for _ in range(n_sentences):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 15)))
        sentences.append(body.capitalize() + rng.choice([".", "?", "!"]))
    return " ".join(sentences)


def test_exact_format() -> None:
    hits = [make_hit(1, "Hello world.", ("Guide", "", "Setup")), make_hit(2, "Bye.")]
    context = assemble_context(hits, ContextBudget(max_chars=1000), len)
    assert context.text == (
        "[DOC:doc1 | CHUNK:doc1#1]\nGuide > Setup\nHello world.\n\n[DOC:doc2 | CHUNK:doc2#2]\nBye."
    )
    assert [c.tag for c in context.citations] == [citation_tag(h.chunk) for h in hits]
    assert context.citations[0].section_path == ("Guide", "", "Setup")
    assert context.char_count == len(context.text)
    assert context.token_estimate == len(context.text)
    assert context.included_row_ids == (1, 2)
    assert context.truncated_hits == 0


def test_empty_hits() -> None:
    assert assemble_context([], ContextBudget(max_tokens=10), words) == AssembledContext(
        text="",
        citations=(),
        token_estimate=0,
        char_count=0,
        included_row_ids=(),
        truncated_hits=0,
    )


def test_token_estimate_uses_count_tokens_under_a_char_budget() -> None:
    context = assemble_context([make_hit(1, "one two three")], ContextBudget(max_chars=500), words)
    assert context.token_estimate == words(context.text) == 6  # 3 in the tag, 3 in the text


def test_truncates_at_word_boundary_with_mark() -> None:
    first = make_hit(1, "short")
    long_text = " ".join(f"word{i}" for i in range(200))
    prefix = "[DOC:doc1 | CHUNK:doc1#1]\nshort\n\n[DOC:doc2 | CHUNK:doc2#2]\n"
    budget = len(prefix) + 250
    context = assemble_context(
        [first, make_hit(2, long_text)], ContextBudget(max_chars=budget), len
    )
    assert context.text.startswith(prefix)
    body = context.text[len(prefix) :]
    assert body.endswith(TRUNCATION_MARK)
    assert long_text.startswith(body[: -len(TRUNCATION_MARK)])
    assert re.fullmatch(r"(word\d+ )*word\d+", body[: -len(TRUNCATION_MARK)])
    assert len(context.text) <= budget and len(context.text) > budget - len("word199 …")
    assert context.included_row_ids == (1, 2)
    assert context.truncated_hits == 1


def test_truncation_prefers_a_sentence_end() -> None:
    text = ("This is a full sentence with some words in it. " * 8) + "tail " * 100
    context = assemble_context([make_hit(1, text)], ContextBudget(max_chars=330), len)
    assert context.text.endswith("words in it.")
    assert not context.text.endswith(TRUNCATION_MARK)
    assert context.truncated_hits == 1


def test_skips_when_little_room_and_keeps_later_block_that_fits() -> None:
    first = make_hit(1, "x " * 100)
    header_and_first = len(f"{citation_tag(first.chunk)}\n") + len(first.chunk.text)
    budget = header_and_first + MIN_TRUNCATION_CHARS - 10
    hits = [first, make_hit(2, "y " * 400), make_hit(3, "fits")]
    context = assemble_context(hits, ContextBudget(max_chars=budget), len)
    assert context.included_row_ids == (1, 3)
    assert context.truncated_hits == 1
    assert "y y" not in context.text


def test_block_larger_than_whole_budget_is_truncated_first() -> None:
    context = assemble_context(
        [make_hit(1, prose(random.Random(1), 80))], ContextBudget(max_tokens=60), words
    )
    assert 0 < words(context.text) <= 60
    assert context.included_row_ids == (1,)
    assert context.truncated_hits == 1


def test_unsplittable_block_is_skipped() -> None:
    hits = [make_hit(1, "z" * 5000), make_hit(2, "ok")]
    context = assemble_context(hits, ContextBudget(max_chars=1000), len)
    assert context.included_row_ids == (2,)
    assert context.truncated_hits == 1


def test_counter_not_additive_at_joins_falls_back_to_exact_measuring() -> None:
    def per_block_squared(text: str) -> int:
        return len(text.split()) + text.count("[DOC:") ** 2

    hits = [make_hit(1, "a b"), make_hit(2, "c d"), make_hit(3, "e f")]
    # Each block alone is 5 words + 1; summed estimates say 18 <= 20, but all three measure 24.
    context = assemble_context(hits, ContextBudget(max_tokens=20), per_block_squared)
    assert context.included_row_ids == (1, 2)
    assert context.token_estimate == per_block_squared(context.text) == 14
    assert context.truncated_hits == 1


@pytest.mark.parametrize(
    ("unit", "measure"),
    [
        ("tokens_words", words),
        ("tokens_quarter", quarter_chars),
        ("tokens_noisy", noisy),
        ("tokens_floor_thirds", floor_thirds),
        ("chars", len),
    ],
    ids=["tokens_words", "tokens_quarter_chars", "tokens_noisy", "tokens_floor_thirds", "chars"],
)
def test_budget_never_exceeded_random(unit: str, measure: Callable[[str], int]) -> None:
    rng = random.Random(unit)
    truncated_into_context = skipped = 0
    for _ in range(300):
        hits = [
            make_hit(i, prose(rng, rng.randint(1, 12)), tuple(rng.sample(WORDS, rng.randint(0, 2))))
            for i in range(rng.randint(0, 8))
        ]
        limit = rng.randint(1, 600 if unit == "chars" else 150)
        budget = (
            ContextBudget(max_chars=limit) if unit == "chars" else ContextBudget(max_tokens=limit)
        )
        context = assemble_context(hits, budget, measure)
        assert measure(context.text) <= limit if context.text else True
        check_consistency(hits, context, measure)
        assert assemble_context(hits, budget, measure) == context
        whole = sum(1 for hit in hits if hit.chunk.text in context.text.split("\n"))
        truncated_into_context += len(context.included_row_ids) - whole
        skipped += len(hits) - len(context.included_row_ids)
    assert truncated_into_context > 20 and skipped > 20, "the loop must exercise both paths"


def check_consistency(
    hits: list[Hit], context: AssembledContext, measure: Callable[[str], int]
) -> None:
    order = [hit.chunk.row_id for hit in hits]
    positions = [order.index(row_id) for row_id in context.included_row_ids]
    assert positions == sorted(positions), "hit order must be kept"
    tags = [c.tag for c in context.citations]
    assert [
        citation_tag(h.chunk) for h in hits if h.chunk.row_id in context.included_row_ids
    ] == tags
    assert [
        f"[DOC:{d} | CHUNK:{c}]"
        for d, c in re.findall(r"\[DOC:(\S+) \| CHUNK:(\S+)\]", context.text)
    ] == tags
    whole = sum(1 for hit in hits if hit.chunk.text in context.text.split("\n"))
    assert context.truncated_hits == len(hits) - whole
    assert context.char_count == len(context.text)


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({}, "budget", "set exactly one of max_tokens or max_chars"),
        ({"max_tokens": 5, "max_chars": 5}, "budget", "set exactly one of max_tokens or max_chars"),
        ({"max_tokens": 0}, "budget.max_tokens", "must be an integer >= 1, got 0"),
        ({"max_tokens": 2.5}, "budget.max_tokens", "must be an integer >= 1, got 2.5"),
        ({"max_chars": -1}, "budget.max_chars", "must be an integer >= 1, got -1"),
        ({"max_chars": True}, "budget.max_chars", "must be an integer >= 1, got True"),
    ],
    ids=["neither", "both", "zero_tokens", "float_tokens", "negative_chars", "bool_chars"],
)
def test_budget_validation(kwargs: dict[str, float], field: str, message: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        ContextBudget(**kwargs)  # type: ignore[arg-type]  # invalid on purpose
    assert str(caught.value) == f"{field}: {message}"
    assert caught.value.violations[0].field == field


def test_budget_limit() -> None:
    assert ContextBudget(max_tokens=7).limit == 7
    assert ContextBudget(max_tokens=10_000_000).limit == 10_000_000, "upper caps are server policy"
    assert ContextBudget(max_chars=9).limit == 9
