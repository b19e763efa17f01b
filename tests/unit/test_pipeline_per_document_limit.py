"""A per-document hit limit gives top_k hits within the limit even when one document's chunks fill
the usual window of candidates, or every candidate the retrievers returned (real model, real
indexes)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.catalog.collection import Collection
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.models import Document
from core.retrieve import pipeline as pipeline_module
from core.retrieve.filters import ChunkFilter
from core.retrieve.modes import RetrievalMode
from core.retrieve.request import RetrievalRequest
from tests.unit.pipeline_support import indexed_pipeline

QUERY = "How do I copy an object in Python?"
SECTIONS = 12  # above the window of top_k 3: 3 x 3 = 9 candidates
DEPTH = 5  # candidates per retriever in the deeper-search tests: fewer than the guide's chunks

LONG = Document(
    "copying-guide",
    "# Copying objects in Python\n\n"
    + "\n\n".join(
        f"## Copying objects, case {n}\n\nTo copy an object in Python, call copy.copy for a "
        f"shallow copy or copy.deepcopy for a deep copy of object number {n}."
        for n in range(1, SECTIONS + 1)
    ),
)
OTHERS = [
    Document("files", "# Files\n\nshutil.copyfile copies a file's contents to another path."),
    Document("lists", "# Lists\n\nA slice such as items[:] makes a new list of the same items."),
    Document("dicts", "# Dictionaries\n\ndict.copy returns a shallow copy of a dictionary."),
    Document("strings", "# Strings\n\nStrings are immutable, so there is nothing to copy."),
]


def test_one_hit_per_document_reaches_past_a_crowding_document(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    with indexed_pipeline(embedder, tmp_path, "docs", [LONG, *OTHERS]) as pipeline:
        plain = pipeline.retrieve(
            RetrievalRequest(query=QUERY, collection="docs", top_k=9, mode=RetrievalMode.DENSE)
        )
        crowded = {hit.chunk.document_id for hit in plain.hits}
        assert crowded == {"copying-guide"}, (
            "the guide must fill the window for this test to matter"
        )
        limited = pipeline.retrieve(
            RetrievalRequest(
                query=QUERY,
                collection="docs",
                top_k=3,
                mode=RetrievalMode.DENSE,
                max_hits_per_document=1,
            )
        )
    documents = [hit.chunk.document_id for hit in limited.hits]
    assert len(documents) == 3
    assert len(set(documents)) == 3, documents
    assert documents[0] == "copying-guide"
    assert limited.hits[0].chunk.chunk_id == plain.hits[0].chunk.chunk_id


@pytest.mark.parametrize("mode", [RetrievalMode.DENSE, RetrievalMode.HYBRID])
def test_one_hit_per_document_searches_deeper_when_one_document_fills_every_candidate(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, mode: RetrievalMode
) -> None:
    request = RetrievalRequest(
        query=QUERY, collection="docs", top_k=3, mode=mode, candidate_depth=DEPTH
    )
    with indexed_pipeline(embedder, tmp_path, "docs", [LONG, *OTHERS]) as pipeline:
        plain = pipeline.retrieve(replace(request, top_k=DEPTH))
        assert {hit.chunk.document_id for hit in plain.hits} == {"copying-guide"}, (
            "the guide must fill every candidate for this test to matter"
        )
        limited = pipeline.retrieve(replace(request, max_hits_per_document=1))
    documents = [hit.chunk.document_id for hit in limited.hits]
    assert len(set(documents)) == 3, documents
    assert documents[0] == "copying-guide"
    assert limited.hits[0].chunk.chunk_id == plain.hits[0].chunk.chunk_id
    assert limited.total_candidates > plain.total_candidates


def test_one_hit_per_document_stops_when_the_collection_runs_out(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    """Two documents can't give three distinct hits: the search deepens to the whole collection
    and returns what there is, the crowding document's other chunks after the other document."""
    request = RetrievalRequest(
        query=QUERY,
        collection="docs",
        top_k=3,
        mode=RetrievalMode.DENSE,
        candidate_depth=DEPTH,
        max_hits_per_document=1,
    )
    with indexed_pipeline(embedder, tmp_path, "docs", [LONG, OTHERS[0]]) as pipeline:
        result = pipeline.retrieve(request)
    documents = [hit.chunk.document_id for hit in result.hits]
    assert len(documents) == 3
    assert documents[:2] == ["copying-guide", "files"]


def test_deepening_stops_at_the_deepest_candidate_count(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter that admits one document keeps every candidate that document's: the search
    deepens at most to `DEEPEST` candidates per retriever, then returns what it has."""
    depths: list[int] = []
    search = Collection.dense_search

    def counted(
        self: Collection, queries: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        depths.append(k)
        return search(self, queries, k, allowed)

    monkeypatch.setattr(Collection, "dense_search", counted)
    monkeypatch.setattr(pipeline_module, "DEEPEST", 2 * DEPTH)
    request = RetrievalRequest(
        query=QUERY,
        collection="docs",
        top_k=3,
        mode=RetrievalMode.DENSE,
        candidate_depth=DEPTH,
        max_hits_per_document=1,
        filters=ChunkFilter(document_ids=frozenset({"copying-guide"})),
    )
    with indexed_pipeline(embedder, tmp_path, "docs", [LONG, *OTHERS]) as pipeline:
        result = pipeline.retrieve(request)
    assert depths == [DEPTH, 2 * DEPTH]
    assert [hit.chunk.document_id for hit in result.hits] == ["copying-guide"] * 3
