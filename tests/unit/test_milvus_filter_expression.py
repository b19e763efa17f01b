"""Filters become Milvus expressions whose values can never change the expression: each hostile
value is stored on one chunk and a filter on it, run by Milvus (milvus-lite over gRPC), matches
exactly the chunks `ChunkFilter.matches` admits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.milvus.backend import MilvusBackend
from core.milvus.filter_expression import chunk_filter_expression, string_literal
from core.milvus.options import MilvusOptions
from core.milvus.store import MilvusStore
from core.models import ChunkDraft, Document, RiskLevel, SourceType
from core.retrieve.filters import ChunkFilter, MetadataRange
from core.store.records import PreparedDocument
from tests.conftest import fresh_milvus_database

HOSTILE = [
    'a"b',
    "a\\b",
    'x") or ("1"=="1',
    "x' or '1'=='1",
    "|| true",
    ') or (document_id != ""',
    "ünïcödé ✓ 漢字",
    "line\nbreak",
    "tab\there\rreturn",
    "trailing\\",
    '\\"',
    "",
    "plain",
]
DIM = 4


def _prepared(document_id: str, value: str, section: str, number: str) -> PreparedDocument:
    document = Document(
        document_id=document_id,
        text=f"text of {document_id}",
        source_type=SourceType.TEXT,
        metadata={"tag": value, value or "empty": "key", "n": number},
    )
    vector = np.ones((1, DIM), np.float32) / 2
    return PreparedDocument(
        document=document,
        content_hash=document.content_hash(),
        chunks=(ChunkDraft(f"chunk of {document_id}", ("Top", section)),),
        embeddings=vector,
        risks=(((), RiskLevel.NONE),),
    )


@pytest.fixture(scope="module")
def collection(milvus_uri: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collection]:
    backend = MilvusBackend(MilvusOptions(uri=milvus_uri, database=fresh_milvus_database()))
    config = CollectionConfig(embedding_model="test", embedding_dim=DIM)
    directory: Path = tmp_path_factory.mktemp("filters") / "docs"
    opened = backend.open("default", "docs", directory, config, "cpu")
    numbers = ["1", "2.5", "inf", "nan", "-3", "1e3", "x"]
    opened.commit(
        [
            _prepared(f"doc-{i}", value, value, numbers[i % len(numbers)])
            for i, value in enumerate(HOSTILE)
        ]
    )
    opened.commit([_prepared(value, "id", "id", "0") for value in HOSTILE if value])
    yield opened
    opened.close()
    backend.close()


def _matching(collection: Collection, chunk_filter: ChunkFilter) -> tuple[set[str], set[str]]:
    """(chunk ids Milvus returns for the expression, chunk ids `matches` admits)."""
    store = collection.store
    assert isinstance(store, MilvusStore)
    everything = [c for batch in store.iter_chunks("") for c in batch]
    expression = chunk_filter_expression(chunk_filter)
    milvus = {c.chunk_id for batch in store.iter_chunks(expression) for c in batch}
    return milvus, {c.chunk_id for c in everything if chunk_filter.matches(c)}


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_a_hostile_metadata_value_matches_only_itself(collection: Collection, value: str) -> None:
    milvus, python = _matching(collection, ChunkFilter(metadata_equals={"tag": value}))
    assert milvus == python == {f"doc-{HOSTILE.index(value)}#0"}


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_a_hostile_metadata_key_matches_only_itself(collection: Collection, value: str) -> None:
    milvus, python = _matching(collection, ChunkFilter(metadata_equals={value or "empty": "key"}))
    assert milvus == python
    assert f"doc-{HOSTILE.index(value)}#0" in milvus


@pytest.mark.parametrize("value", [v for v in HOSTILE if v], ids=repr)
def test_a_hostile_document_id_matches_only_itself(collection: Collection, value: str) -> None:
    milvus, python = _matching(collection, ChunkFilter(document_ids=frozenset({value})))
    assert milvus == python == {f"{value}#0"}


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_a_hostile_section_prefix_matches_only_itself(collection: Collection, value: str) -> None:
    milvus, python = _matching(collection, ChunkFilter(section_prefix=("Top", value)))
    assert milvus == python == {f"doc-{HOSTILE.index(value)}#0"}


def test_metadata_in_and_ranges_agree_with_the_python_filter(collection: Collection) -> None:
    cases = [
        ChunkFilter(metadata_in={"tag": frozenset({'a"b', "|| true", "nope"})}),
        ChunkFilter(metadata_ranges=(MetadataRange("n", minimum=1.0, maximum=3.0),)),
        ChunkFilter(metadata_ranges=(MetadataRange("n", minimum=100.0),)),  # inf, 1e3 and nan
        ChunkFilter(metadata_ranges=(MetadataRange("n", maximum=0.0),)),
        ChunkFilter(metadata_ranges=(MetadataRange('n"] or true or metadata["n', minimum=0),)),
    ]
    for chunk_filter in cases:
        milvus, python = _matching(collection, chunk_filter)
        assert milvus == python, chunk_filter


def test_literals_escape_quotes_backslashes_and_line_breaks() -> None:
    assert string_literal('say "hi" \\ now\n') == '"say \\"hi\\" \\\\ now\\n"'
    assert string_literal("bell\x07") is None  # not writable in a Milvus literal: left out
    assert chunk_filter_expression(ChunkFilter(metadata_equals={"k": "bell\x07"})) == ""
