"""Self-supervised tune pairs from real documents: the demo corpus (Markdown FAQ pages) chunked as
the indexer chunks it, and titled/untitled text as the eval loader stores BEIR documents."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.ingest.chunking_spec import ChunkingSpec
from core.ingest.document_chunker import chunk_any
from core.models import ChunkDraft, Document, SourceType
from core.tune.pairs import split_pairs, structure_pairs

DEMO = Path(__file__).resolve().parents[2] / "server" / "demo_corpus"


def _chunks(document: Document, count: Callable[[str], int]) -> list[ChunkDraft]:
    return [c.draft for c in chunk_any(document, b"", ChunkingSpec(), count)]


def _demo_documents(count: Callable[[str], int]) -> list[list[ChunkDraft]]:
    files = sorted(p for p in DEMO.glob("*.md") if p.name != "README.md")
    return [
        _chunks(Document(p.stem, p.read_text("utf-8"), SourceType.MARKDOWN), count) for p in files
    ]


def test_headings_pair_with_their_section_text(count_words: Callable[[str], int]) -> None:
    pairs = structure_pairs(_demo_documents(count_words))
    by_anchor = {p.anchor: p for p in pairs}
    pair = by_anchor["General Python FAQ > What is Python?"]
    assert pair.kind == "heading"
    assert pair.positive.startswith("Python is an interpreted, interactive, object-oriented")
    assert "What is Python?" not in pair.positive  # the body only: no string match to learn
    subheadings = [p for p in pairs if p.kind == "subheading"]
    assert subheadings
    for sub in subheadings:  # the section's second chunk, under its last heading alone
        assert any(a.endswith(f" > {sub.anchor}") for a in by_anchor)
        assert sub.positive not in {p.positive for p in pairs if p.kind == "heading"}
    assert len({p.anchor.casefold() for p in pairs}) == len(pairs)  # no in-batch false negatives
    assert len({p.positive for p in pairs}) == len(pairs)
    assert len(pairs) > 100


def test_untitled_text_gives_no_pair_and_titled_text_does(
    count_words: Callable[[str], int],
) -> None:
    body = "Use the json module: json.dumps turns a dict into a string and back. " * 3
    untitled = Document("faq-1", body, SourceType.TEXT)
    titled = Document("lib-1", body.replace("json", "csv"), SourceType.TEXT, title="csv — CSV")
    titled_chunks = [
        ChunkDraft(c.text, ("csv — CSV", *c.section_path)) for c in _chunks(titled, count_words)
    ]  # the indexer puts the title at the root of the section path
    pairs = structure_pairs([_chunks(untitled, count_words), titled_chunks])
    assert [(p.anchor, p.kind) for p in pairs] == [("csv — CSV", "heading")]


def test_split_is_seeded_bounded_and_disjoint(count_words: Callable[[str], int]) -> None:
    pairs = structure_pairs(_demo_documents(count_words))
    train, held = split_pairs(pairs, 0.1, 80, seed=3)
    again = split_pairs(pairs, 0.1, 80, seed=3)
    assert (train, held) == again
    assert len(train) + len(held) == 80 and len(held) == 8
    assert not {p.anchor for p in train} & {p.anchor for p in held}
