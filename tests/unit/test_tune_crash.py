"""A process killed at the tune's swap point (tuned model, new dense index and re-embedded section
vectors computed, store not yet committed) loses nothing: reopening serves the old model's chunk
and section vectors and index, and removes what the tune left on disk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.catalog.collection import DENSE_DIR, MODELS_DIR, Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.model_check import ModelCheck
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.indexer import Indexer
from core.models import Document, SourceType

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "server" / "demo_corpus"
CRASH_CODE = 17


def _indexed(directory: Path, embedder: SentenceTransformerEmbedder) -> None:
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=384)
    collection = Collection.open(directory.name, directory, config)
    documents = [
        Document(p.stem, p.read_text("utf-8"), SourceType.MARKDOWN)
        for p in (DEMO / "faq-general.md", DEMO / "faq-windows.md")
    ]
    Indexer(embedder, 200, 1 << 20).index(collection, documents)
    collection.close()


def _section_vectors(collection: Collection) -> tuple[list[int], np.ndarray]:
    ids = [int(i) for batch, _ in collection.store.iter_live_vectors() for i in batch]
    found, vectors = collection.store.get_section_vectors(ids)
    assert found.tolist() == sorted(ids)  # every chunk has its section's vector
    return found.tolist(), vectors


def _search(collection: Collection, embedder: SentenceTransformerEmbedder) -> list[int]:
    query = embedder.embed_queries(["How do I run a Python program under Windows?"])
    _, ids = collection.dense_search(query, 5)
    return [int(i) for i in ids[0]]


def test_a_crash_at_the_swap_point_keeps_the_old_model(
    tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    directory = tmp_path / "faq"
    _indexed(directory, embedder)
    before = Collection.open(directory.name, directory, None)
    found_before = _search(before, embedder)
    sequence, incarnation = before.store.sequence(), before.incarnation
    sections_before = _section_vectors(before)
    before.close()

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "clients/python")])}
    crashed = subprocess.run(
        [sys.executable, "-m", "tests.tune_crash_driver", str(directory), str(CRASH_CODE)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=1200,
    )
    assert crashed.returncode == CRASH_CODE, crashed.stderr.decode()[-2000:]
    left_models = [p.name for p in (directory / MODELS_DIR).iterdir()]
    left_dense = sorted(p.name for p in directory.iterdir() if p.name.startswith("dense-"))
    assert len(left_models) == 1 and left_dense == [f"dense-{left_models[0]}"]

    after = Collection.open(directory.name, directory, None)
    try:
        assert after.config.tuned_model == "" and after.config.section_vectors
        assert (after.store.sequence(), after.incarnation) == (sequence, incarnation)
        assert list((directory / MODELS_DIR).iterdir()) == []  # leftovers removed on open
        assert sorted(p.name for p in directory.iterdir() if p.name.startswith("dense")) == [
            DENSE_DIR
        ]
        ModelCheck(embedder).require(after)  # the stored vectors are still the server model's
        assert _search(after, embedder) == found_before
        ids, sections = _section_vectors(after)
        assert ids == sections_before[0] and np.array_equal(sections, sections_before[1])
        assert after.open_report is not None and not after.open_report.rebuilt
    finally:
        after.close()
