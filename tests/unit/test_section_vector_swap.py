"""A tune's swap (`Collection.adopt_embeddings`) replaces chunk and section vectors together: the
store's section-vector LRU never serves a vector read before the swap after it, a swap that fails
changes nothing, and collections tuned before section vectors were re-embedded keep working
without them. Deterministic vectors, no model (tests/unit/test_tune_sections.py tunes for real)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.store.records import SectionVectors
from core.tune.reembed import build_engine
from tests.unit.collection_support import DIM, open_collection, prepared, vectors_for
from tests.unit.test_section_vectors import (
    PATHS,
    expected_view,
    section_matrix,
    section_view,
    with_sections,
)

TUNED = "20261124T000000Z-0123abcd"


@pytest.fixture
def collection(tmp_path: Path) -> Collection:
    opened = open_collection(tmp_path / "data" / "c")
    yield opened
    opened.close()


def _live(collection: Collection) -> tuple[np.ndarray, np.ndarray]:
    ids, vectors = [], []
    for batch_ids, batch in collection.store.iter_live_vectors():
        ids.append(batch_ids)
        vectors.append(batch)
    return np.concatenate(ids), np.concatenate(vectors)


def _new_sections(*document_ids: str) -> tuple[tuple[str, SectionVectors], ...]:
    """Section vectors "of the tuned model": version 7 of each document's."""
    paths = tuple(dict.fromkeys(PATHS))
    return tuple(
        (d, SectionVectors(paths, section_matrix(d, len(paths), version=7))) for d in document_ids
    )


def _adopt(collection: Collection, sections: tuple[tuple[str, SectionVectors], ...]) -> np.ndarray:
    """Swap in new chunk vectors (version 7) and `sections`; the new chunk vectors."""
    ids, old = _live(collection)
    fresh = vectors_for("tuned", len(ids), 7)
    assert not np.allclose(fresh, old)
    with collection.write_lock:
        collection.adopt_embeddings(
            TUNED,
            ids,
            fresh,
            build_engine(collection, ids, fresh),
            collection.store.sequence(),
            sections=sections,
        )
    return fresh


def test_vectors_read_before_a_tune_swap_are_never_served_after_it(
    collection: Collection,
) -> None:
    collection.commit([with_sections("a"), with_sections("b")])
    ids, _ = _live(collection)
    found, _ = collection.store.get_section_vectors(ids)  # read once: the store keeps them
    assert found.tolist() == sorted(ids.tolist())
    assert section_view(collection) == {**expected_view("a"), **expected_view("b")}

    fresh = _adopt(collection, _new_sections("a", "b"))

    assert section_view(collection) == {**expected_view("a", 7), **expected_view("b", 7)}
    _, stored = collection.store.get_vectors(ids)
    assert np.array_equal(stored, fresh)
    assert collection.config.tuned_model == TUNED and collection.config.section_vectors


def test_a_swap_that_fails_changes_neither_kind_of_vector(collection: Collection) -> None:
    collection.commit([with_sections("a"), with_sections("b")])
    ids, before = _live(collection)
    view, config, incarnation = section_view(collection), collection.config, collection.incarnation
    wrong = SectionVectors((("Guide", "Elsewhere"),), section_matrix("b", 1, 7))
    with pytest.raises(ValueError) as failed:
        _adopt(collection, (*_new_sections("a"), ("b", wrong)))
    assert str(failed.value) == (
        "document 'b' is not live or its chunks' section paths differ from the section vectors "
        "given"
    )
    assert np.array_equal(_live(collection)[1], before)
    assert section_view(collection) == view  # "a" was written in the rolled-back transaction
    assert (collection.config, collection.incarnation) == (config, incarnation)
    assert collection.store.get_meta("collection_config") == config.to_json()


def test_a_swap_must_bring_section_vectors_when_the_collection_keeps_them(
    collection: Collection,
) -> None:
    collection.commit([with_sections("a")])
    view = section_view(collection)
    with pytest.raises(ValueError) as refused:
        _adopt(collection, ())
    assert str(refused.value) == (
        "collection 'c' keeps section vectors: re-embed them with the chunks"
    )
    assert section_view(collection) == view and collection.config.tuned_model == ""


def test_a_collection_tuned_before_section_vectors_were_re_embedded_keeps_none(
    tmp_path: Path,
) -> None:
    """Such a collection's config has `tuned_model` set and `section_vectors` off; tuning it
    again swaps chunk vectors only and leaves it without section vectors."""
    directory = tmp_path / "old"
    config = CollectionConfig(
        embedding_dim=DIM, embedding_model="test", tuned_model="old", section_vectors=False
    )
    collection = Collection.open(directory.name, directory, config)
    try:
        collection.commit([prepared("a"), prepared("b")], tuned_model="old")
        fresh = _adopt(collection, ())
        assert collection.config == replace(config, tuned_model=TUNED)
        assert np.array_equal(_live(collection)[1], fresh)
        assert section_view(collection) == {}
    finally:
        collection.close()
    reopened = Collection.open(directory.name, directory, None)
    try:
        assert reopened.config == replace(config, tuned_model=TUNED)
        _, found = reopened.dense_search(fresh[:1], 1)
        assert found[0][0] == _live(reopened)[0][0]
    finally:
        reopened.close()
