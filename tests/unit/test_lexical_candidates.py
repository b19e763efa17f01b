"""`score_lexical_candidates`: chunks only BM25 found get their exact dense score before fusion.
The merge itself, and the real pipeline (real model, FAISS and Tantivy) against a brute-force
fusion of the same lists; off (the default) leaves the fusion as it was."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.indexer import Indexer
from core.models import Document
from core.retrieve.fusion import FusionMethod, fuse
from core.retrieve.keywords import extract_keywords, lexical_query
from core.retrieve.lexical_candidates import with_lexical_candidates
from core.retrieve.modes import RetrievalMode
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest
from groundwire.v1 import retrieval_service_pb2 as rs
from server.retrieve_validation import validate_retrieve
from server.settings import RetrievalSettings


def fixed_scores(table: dict[int, float], calls: list[list[int]]):  # type: ignore[no-untyped-def]
    """A subset search answering from `table` (rows it lacks are gone: padded with -1)."""

    def search(rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        calls.append(rows.tolist())
        found = sorted(((table[r], r) for r in rows.tolist() if r in table), reverse=True)[:k]
        scores = np.full((1, k), -np.inf, dtype=np.float32)
        ids = np.full((1, k), -1, dtype=np.int64)
        for i, (score, row) in enumerate(found):
            scores[0, i], ids[0, i] = score, row
        return scores, ids

    return search


def test_lexical_only_rows_join_the_dense_ranking_with_their_own_scores() -> None:
    calls: list[list[int]] = []
    dense = [(1, 0.9), (2, 0.7)]
    lexical = [(3, 12.0), (2, 9.0), (4, 8.0), (3, 7.0)]  # 3 twice: scored once
    merged = with_lexical_candidates(dense, lexical, fixed_scores({3: 0.8, 4: 0.2}, calls))
    assert calls == [[3, 4]]
    assert merged == [(1, 0.9), (3, pytest.approx(0.8)), (2, 0.7), (4, pytest.approx(0.2))]
    assert dense == [(1, 0.9), (2, 0.7)], "the input ranking is not mutated"


def test_nothing_to_score_searches_nothing() -> None:
    calls: list[list[int]] = []
    dense = [(1, 0.9), (2, 0.7)]
    assert with_lexical_candidates(dense, [(2, 3.0)], fixed_scores({}, calls)) == dense
    assert with_lexical_candidates(dense, [], fixed_scores({}, calls)) == dense
    assert calls == []


def test_a_row_the_dense_index_no_longer_holds_stays_out() -> None:
    merged = with_lexical_candidates([(1, 0.5)], [(9, 4.0)], fixed_scores({}, []))
    assert merged == [(1, 0.5)]


def test_equal_scores_keep_the_dense_rows_first() -> None:
    merged = with_lexical_candidates([(5, 0.5)], [(2, 1.0)], fixed_scores({2: 0.5}, []))
    assert merged == [(5, 0.5), (2, 0.5)]


TOPICS = [
    ("sorting", "Sorting a list: sorted() returns a new list; list.sort() sorts in place."),
    ("copying", "Copying objects: copy.copy makes a shallow copy, copy.deepcopy a deep one."),
    ("files", "Reading files: open the path and iterate over its lines one by one."),
    ("strings", "Strings are immutable sequences of Unicode code points in Python."),
    ("dicts", "A dictionary maps hashable keys to values; dict.get returns a default."),
    ("threads", "The threading module runs functions concurrently in one process."),
    ("regex", "The re module matches regular expressions; re.sub replaces each match."),
    ("zipfile", "zipfile reads and writes ZIP archives; ZipFile.extractall unpacks one."),
    (
        "substitution",
        "Pattern substitution: re.sub swaps each occurrence of a pattern for new text.",
    ),
    ("matches", "Safety matches: replace the box of matches when every match is struck."),
]
QUERY = "how do I replace matches of a regular expression in a string"


@pytest.fixture()
def documents() -> list[Document]:
    return [Document(name, f"# {name}\n\n{text}") for name, text in TOPICS]


def test_the_pipeline_fuses_every_candidate_with_its_exact_dense_score(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, documents: list[Document]
) -> None:
    """Depth 2 per retriever: BM25 brings candidates the dense top 2 lacks. Each hit's dense score
    is its exact cosine to the stored chunk vector, and the ranking is a brute-force weighted
    fusion of those full dense scores with BM25's list."""
    request = RetrievalRequest(
        query=QUERY, collection="docs", top_k=8, candidate_depth=2, section_weight=0.0
    )
    with indexed_collection(embedder, tmp_path, documents) as (collection, pipeline):
        lexical = collection.lexical_search(lexical_query(QUERY, extract_keywords(QUERY)), 2)
        query = embedder.embed_queries([QUERY])[0]
        cosine = {
            int(row_id): float(vector @ query)
            for ids, vectors in collection.store.iter_live_vectors()
            for row_id, vector in zip(ids, vectors, strict=True)
        }
        before = pipeline.retrieve(request)
        after = pipeline.retrieve(replace(request, score_lexical_candidates=True))

    dense_before = {h.chunk.row_id for h in before.hits if h.scores.dense is not None}
    only_lexical = [row_id for row_id, _ in lexical if row_id not in dense_before]
    assert only_lexical, "BM25 must find a chunk the dense top 2 lacks for this test to matter"
    by_row = {hit.chunk.row_id: hit for hit in after.hits}
    assert "lexical_candidates" not in dict(before.timings)
    for row_id in only_lexical:
        assert by_row[row_id].scores.dense == pytest.approx(cosine[row_id], abs=1e-5)
    dense_full = sorted(
        [
            (h.chunk.row_id, cosine[h.chunk.row_id])
            for h in after.hits
            if h.scores.dense is not None
        ],
        key=lambda pair: -pair[1],
    )
    assert len(dense_full) == len(after.hits), "every fused candidate has a dense score"
    expected = fuse(FusionMethod.WEIGHTED, [dense_full, lexical], weights=[1.0, 0.25])
    assert [row_id for row_id, _ in expected] == [h.chunk.row_id for h in after.hits]
    assert [s for _, s in expected] == pytest.approx([h.score for h in after.hits], abs=1e-5)
    assert "lexical_candidates" in dict(after.timings)


@contextmanager
def indexed_collection(
    embedder: SentenceTransformerEmbedder, data_dir: Path, documents: list[Document]
) -> Iterator[tuple[Collection, RetrievalPipeline]]:
    """`documents` indexed into collection "docs", and a pipeline over it."""
    catalog = CollectionCatalog(data_dir)
    catalog.open_all()
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=embedder.dimension)
    collection = catalog.create(DEFAULT_TENANT, "docs", config)
    Indexer(embedder, 200, 1 << 20).index(collection, documents)
    try:
        with ThreadPoolExecutor(2) as pool:
            yield collection, RetrievalPipeline(catalog, embedder, pool)
    finally:
        catalog.close()


def test_dense_and_lexical_modes_are_untouched(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, documents: list[Document]
) -> None:
    request = RetrievalRequest(query=QUERY, collection="docs", top_k=8, candidate_depth=2)
    with indexed_collection(embedder, tmp_path, documents) as (_, pipeline):
        for mode in (RetrievalMode.DENSE, RetrievalMode.LEXICAL):
            on = pipeline.retrieve(replace(request, mode=mode, score_lexical_candidates=True))
            off = pipeline.retrieve(replace(request, mode=mode))
            assert [(h.chunk.row_id, h.score) for h in on.hits] == [
                (h.chunk.row_id, h.score) for h in off.hits
            ]
            assert "lexical_candidates" not in dict(on.timings)


def test_the_setting_reaches_every_retrieve_request() -> None:
    message = rs.RetrieveRequest(query="how do I sort a list")
    assert not validate_retrieve(message, RetrievalSettings(), "docs").score_lexical_candidates
    on = RetrievalSettings(score_lexical_candidates=True)
    assert validate_retrieve(message, on, "docs").score_lexical_candidates
