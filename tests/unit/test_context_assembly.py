"""Tests for core.context.assembly: format, order, dedupe, summaries, truncation, the budget."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.context.assembly import (
    TRUNCATION_MARK,
    AssembledContext,
    BudgetUnit,
    ContextBudget,
    assemble_context,
)
from core.context.citations import citation_tag
from core.context.ordering import order_hits
from core.context.summary import OMISSION_MARK
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


COUNTERS: dict[str, Callable[[str], int]] = {
    "words": words,
    "quarter_chars": quarter_chars,
    "noisy": noisy,
    "floor_thirds": floor_thirds,
}


def make_hit(
    row_id: int,
    text: str,
    section: tuple[str, ...] = (),
    doc: str = "",
    score: float | None = None,
) -> Hit:
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
    return Hit(chunk=chunk, rank=row_id, score=1.0 / (row_id + 1) if score is None else score)


def prose(rng: random.Random, n_sentences: int) -> str:
    sentences = []
    for _ in range(n_sentences):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 15)))
        sentences.append(body.capitalize() + rng.choice([".", "?", "!"]))
    return " ".join(sentences)


def tag(hit: Hit) -> str:
    return citation_tag(hit.chunk)


def test_exact_format() -> None:
    hits = [make_hit(1, "Hello world.", ("Guide", "", "Setup")), make_hit(2, "Bye.")]
    context = assemble_context(hits, ContextBudget(max_chars=1000), len)
    assert context.text == (
        "[DOC:doc1 | CHUNK:doc1#1]\nGuide > Setup\nHello world.\n\n[DOC:doc2 | CHUNK:doc2#2]\nBye."
    )
    assert [c.tag for c in context.citations] == [tag(h) for h in hits]
    assert context.passages == ("Hello world.", "Bye.")
    assert context.citations[0].section_path == ("Guide", "", "Setup")
    assert context.char_count == len(context.text)
    assert context.token_estimate == len(context.text)
    assert context.included_row_ids == (1, 2)
    assert (context.budget_limit, context.budget_unit) == (1000, BudgetUnit.CHARS)
    counts = (context.summarised_hits, context.truncated_hits, context.dropped_hits)
    assert counts == (0, 0, 0) and context.duplicate_hits == 0


def test_empty_hits() -> None:
    assert assemble_context([], ContextBudget(max_tokens=10), words) == AssembledContext(
        text="",
        citations=(),
        token_estimate=0,
        char_count=0,
        included_row_ids=(),
        truncated_hits=0,
        budget_limit=10,
        budget_unit=BudgetUnit.TOKENS,
    )


def test_token_estimate_uses_count_tokens_under_a_char_budget() -> None:
    context = assemble_context([make_hit(1, "one two three")], ContextBudget(max_chars=500), words)
    assert context.token_estimate == words(context.text) == 6  # 3 in the tag, 3 in the text


def test_reserves_shrink_the_room_for_context() -> None:
    hits = [make_hit(1, "First sentence here. Second one follows. Third ends it.")]
    roomy = assemble_context(hits, ContextBudget(max_tokens=40), words)
    assert roomy.summarised_hits == 0 and words(roomy.text) == 12
    budget = ContextBudget(max_tokens=40, reserve_system_tokens=25, reserve_query_tokens=5)
    context = assemble_context(hits, budget, words)
    assert context.budget_limit == 10 and words(context.text) <= 10
    assert (
        context.text == f"{tag(hits[0])}\nFirst sentence here. Second one follows. {OMISSION_MARK}"
    )
    assert context.summarised_hits == 1


def test_context_follows_score_depth_and_diversity_order() -> None:
    hits = [
        make_hit(1, "one", ("A", "B"), doc="x", score=1.0),
        make_hit(2, "two", ("A",), doc="x", score=0.995),
        make_hit(3, "three", ("A",), doc="y", score=0.99),
        make_hit(4, "four", ("A",), doc="x", score=0.5),
    ]
    context = assemble_context(list(reversed(hits)), ContextBudget(max_chars=1000), len)
    assert context.included_row_ids == (2, 3, 1, 4)
    assert [c.chunk_id for c in context.citations] == ["x#2", "y#3", "x#1", "x#4"]


def test_near_duplicates_are_left_out_and_counted() -> None:
    text = prose(random.Random(3), 6)
    contained = " ".join(text.split()[5:25])
    hits = [
        make_hit(1, text, score=0.9),
        make_hit(2, text.replace(".", "!"), score=0.8),  # same words: Jaccard 1.0
        make_hit(3, contained, score=0.7),  # contained in the first
        make_hit(4, text + " " + prose(random.Random(4), 3), score=0.6),  # extends it
        make_hit(5, "Unrelated words.", score=0.5),
    ]
    context = assemble_context(hits, ContextBudget(max_chars=10_000), len)
    assert context.included_row_ids == (1, 4, 5)
    assert context.duplicate_hits == 2
    assert context.shortened_or_left_out == 0


def test_long_chunk_is_summarised_by_query_relevance_in_original_order() -> None:
    first = make_hit(1, "Short intro.", score=1.0)
    body = (
        "Lists are ordered. Tuples are immutable sequences. Sets hold unique items. "
        "Dictionaries map keys to values. Tuples can be dictionary keys when hashable."
    )
    hits = [first, make_hit(2, body, score=0.5)]
    prefix = f"{tag(first)}\nShort intro.\n\n{tag(hits[1])}\n"
    budget = len(prefix) + 90
    context = assemble_context(hits, ContextBudget(max_chars=budget), len, query="tuple keys?")
    assert context.text == prefix + (
        f"{OMISSION_MARK} Tuples are immutable sequences. {OMISSION_MARK} "
        f"Tuples can be dictionary keys when hashable."
    )
    assert len(context.text) <= budget
    assert context.included_row_ids == (1, 2)
    assert (context.summarised_hits, context.truncated_hits, context.dropped_hits) == (1, 0, 0)


def test_injected_scorer_picks_the_sentences() -> None:
    hits = [make_hit(1, "Aaa aaa. Bbb bbb. Ccc ccc.")]

    def last_first(query: str, sentences: Sequence[str]) -> list[float]:
        return [float(i) for i in range(len(sentences))]

    budget = ContextBudget(max_chars=len(tag(hits[0])) + 12)
    context = assemble_context(hits, budget, len, query="q", scorer=last_first)
    assert context.text == f"{tag(hits[0])}\n{OMISSION_MARK} Ccc ccc."


def test_later_chunk_without_a_fitting_sentence_is_dropped_not_truncated() -> None:
    first = make_hit(1, "short")
    long_text = " ".join(f"word{i}" for i in range(200))  # one sentence
    hits = [first, make_hit(2, long_text), make_hit(3, "fits")]
    budget = len(f"{tag(first)}\nshort\n\n{tag(hits[1])}\n") + 250
    context = assemble_context(hits, ContextBudget(max_chars=budget), len)
    assert context.included_row_ids == (1, 3)
    assert "word0" not in context.text and TRUNCATION_MARK not in context.text
    assert (context.summarised_hits, context.truncated_hits, context.dropped_hits) == (0, 0, 1)


def test_first_chunk_is_truncated_when_no_sentence_fits() -> None:
    long_text = " ".join(f"word{i}" for i in range(200))
    hit = make_hit(1, long_text)
    budget = len(tag(hit)) + 1 + 250
    context = assemble_context([hit], ContextBudget(max_chars=budget), len)
    body = context.text[len(tag(hit)) + 1 :]
    assert body.endswith(TRUNCATION_MARK)
    assert re.fullmatch(r"(word\d+ )*word\d+", body[: -len(TRUNCATION_MARK)])
    assert long_text.startswith(body[: -len(TRUNCATION_MARK)])
    assert context.passages == (body,)
    assert budget - len("word199 …") < len(context.text) <= budget
    assert context.included_row_ids == (1,)
    assert (context.summarised_hits, context.truncated_hits, context.dropped_hits) == (0, 1, 0)


def test_nothing_fits_when_not_even_the_tag_does() -> None:
    hits = [make_hit(1, "alpha beta"), make_hit(2, "gamma")]
    context = assemble_context(hits, ContextBudget(max_chars=10), len)
    assert context.text == "" and context.included_row_ids == ()
    assert context.dropped_hits == 2


def test_counter_not_additive_at_joins_falls_back_to_exact_measuring() -> None:
    def per_block_squared(text: str) -> int:
        return len(text.split()) + text.count("[DOC:") ** 2

    hits = [make_hit(1, "a b"), make_hit(2, "c d"), make_hit(3, "e f")]
    # Each block alone is 5 words + 1; summed estimates say 18 <= 20, but all three measure 24.
    context = assemble_context(hits, ContextBudget(max_tokens=20), per_block_squared)
    assert context.included_row_ids == (1, 2)
    assert context.token_estimate == per_block_squared(context.text) == 14
    assert context.dropped_hits == 1


def test_inputs_are_not_mutated_and_output_is_byte_identical() -> None:
    rng = random.Random(11)
    hits = [make_hit(i, prose(rng, rng.randint(1, 9)), score=0.5) for i in range(8)]
    before = list(hits)
    budget = ContextBudget(max_tokens=90, reserve_query_tokens=10)
    first = assemble_context(hits, budget, words, query="alpha beta")
    assert hits == before
    assert assemble_context(hits, budget, words, query="alpha beta") == first
    shuffled = hits[:]
    random.Random(5).shuffle(shuffled)
    assert assemble_context(shuffled, budget, words, query="alpha beta") == first


@st.composite
def hit_lists(draw: st.DrawFn) -> list[Hit]:
    """Up to 8 hits: prose, repeated texts (duplicates), long single words; close scores."""
    pool = draw(st.lists(st.text(alphabet=" .!?abcdefgh\n", max_size=300), min_size=1, max_size=4))
    hits: list[Hit] = []
    for row_id in range(draw(st.integers(0, 8))):
        text = draw(st.one_of(st.sampled_from(pool), st.text(alphabet=" .abc\n", max_size=120)))
        score = draw(st.sampled_from([1.0, 0.99, 0.985, 0.5, 0.0, float("nan")]))
        section = tuple(draw(st.lists(st.sampled_from(["A", "B", ""]), max_size=3)))
        doc = draw(st.sampled_from(["d1", "d2", "d3"]))
        hits.append(make_hit(row_id, text, section, doc=doc, score=score))
    return hits


@st.composite
def budgets(draw: st.DrawFn) -> ContextBudget:
    if draw(st.booleans()):
        return ContextBudget(max_chars=draw(st.integers(1, 800)))
    reserves = draw(st.tuples(st.integers(0, 20), st.integers(0, 20)))
    return ContextBudget(
        max_tokens=sum(reserves) + draw(st.integers(1, 200)),
        reserve_system_tokens=reserves[0],
        reserve_query_tokens=reserves[1],
    )


def check_invariants(
    hits: list[Hit], context: AssembledContext, measure: Callable[[str], int]
) -> None:
    assert measure(context.text) <= context.budget_limit or not context.text
    accounted = len(context.included_row_ids) + context.dropped_hits + context.duplicate_hits
    assert accounted == len(hits)
    assert context.summarised_hits + context.truncated_hits <= len(context.included_row_ids)
    assert context.truncated_hits <= 1
    order = [hit.chunk.row_id for hit in order_hits(hits)]
    positions = [order.index(row_id) for row_id in context.included_row_ids]
    assert positions == sorted(positions), "context order must follow order_hits"
    tags = [c.tag for c in context.citations]
    by_row = {hit.chunk.row_id: hit for hit in hits}
    assert tags == [tag(by_row[row_id]) for row_id in context.included_row_ids]
    assert re.findall(r"\[DOC:\S+ \| CHUNK:\S+\]", context.text) == tags
    assert context.char_count == len(context.text)
    # passages: what each chunk placed, rebuilding the text block by block
    assert len(context.passages) == len(context.citations)
    blocks = []
    for row_id, passage in zip(context.included_row_ids, context.passages, strict=True):
        hit = by_row[row_id]
        path = " > ".join(part for part in hit.chunk.section_path if part)
        blocks.append(tag(hit) + "\n" + (path + "\n" if path else "") + passage)
    assert "\n\n".join(blocks) == context.text
    changed = sum(
        passage != by_row[row_id].chunk.text
        for row_id, passage in zip(context.included_row_ids, context.passages, strict=True)
    )
    assert changed == context.summarised_hits + context.truncated_hits


@pytest.mark.parametrize("counter", list(COUNTERS), ids=list(COUNTERS))
@settings(max_examples=100, deadline=None, derandomize=True)
@given(hits=hit_lists(), budget=budgets(), query=st.sampled_from(["", "abc", "a b c d"]))
def test_budget_is_never_exceeded(
    counter: str, hits: list[Hit], budget: ContextBudget, query: str
) -> None:
    count_tokens = COUNTERS[counter]
    measure = count_tokens if budget.unit is BudgetUnit.TOKENS else len
    context = assemble_context(hits, budget, count_tokens, query=query)
    check_invariants(hits, context, measure)
    assert assemble_context(hits, budget, count_tokens, query=query) == context
    assert assemble_context(hits[::-1], budget, count_tokens, query=query) == context
    # Stored counts are `words`, wrong for every other counter: the full measure still holds
    # the budget.
    stored = assemble_context(hits, budget, count_tokens, query=query, stored_token_counts=True)
    check_invariants(hits, stored, measure)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(hits=hit_lists(), budget=budgets(), query=st.sampled_from(["", "abc", "a b c d"]))
def test_stored_counts_of_an_additive_counter_give_the_same_context(
    hits: list[Hit], budget: ContextBudget, query: str
) -> None:
    # `words` sums across whitespace and make_hit stores `words` counts: reading them and
    # trusting the sum must change nothing, byte for byte.
    plain = assemble_context(hits, budget, words, query=query)
    fast = assemble_context(
        hits, budget, words, query=query, stored_token_counts=True, additive_counts=True
    )
    assert fast == plain


def test_stored_counts_are_read_instead_of_counting_bodies() -> None:
    hits = [make_hit(i, prose(random.Random(i), 6)) for i in range(1, 5)]
    measured: list[str] = []

    def counting(text: str) -> int:
        measured.append(text)
        return words(text)

    budget = ContextBudget(max_tokens=10_000)
    context = assemble_context(
        hits, budget, counting, stored_token_counts=True, additive_counts=True
    )
    assert context.included_row_ids == (1, 2, 3, 4)
    assert context.token_estimate == words(context.text)
    bodies = {hit.chunk.text for hit in hits}
    assert not any(body in text for text in measured for body in bodies)
    assert context.text not in measured


def test_random_inputs_exercise_every_outcome() -> None:
    rng = random.Random("outcomes")
    totals = {"summarised": 0, "truncated": 0, "dropped": 0, "duplicate": 0}
    for _ in range(300):
        texts = [prose(rng, rng.randint(1, 12)) for _ in range(3)]
        texts.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 60))))
        hits = [
            make_hit(i, rng.choice(texts), tuple(rng.sample(WORDS, rng.randint(0, 2))))
            for i in range(rng.randint(0, 8))
        ]
        budget = ContextBudget(max_tokens=rng.randint(1, 150))
        context = assemble_context(hits, budget, quarter_chars, query=" ".join(WORDS[:3]))
        check_invariants(hits, context, quarter_chars)
        totals["summarised"] += context.summarised_hits
        totals["truncated"] += context.truncated_hits
        totals["dropped"] += context.dropped_hits
        totals["duplicate"] += context.duplicate_hits
    assert min(totals.values()) > 20, totals
