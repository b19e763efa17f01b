"""A real tune of a small collection keeps its section vectors, re-embedded with the tuned model:
the stored ones are what the tuned model computes for each section, Retrieve mixes them in, the
store's LRU serves no vector from before the swap, and a tune cancelled while re-embedding leaves
the collection exactly as it was."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from core.catalog.catalog import DEFAULT_TENANT, CollectionCatalog
from core.catalog.collection import MODELS_DIR, Collection
from core.catalog.collection_config import CollectionConfig
from core.embed.embedding_text import embedding_text
from core.embed.section_vectors import SECTION_TEXT_CHARS
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from core.indexer import Indexer
from core.models import Document, SourceType
from core.retrieve.modes import RetrievalMode
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest
from core.tune.collection_embedders import CollectionEmbedders
from core.tune.options import TuneOptions
from core.tune.tuner import CollectionTuner, TuneProgress, TuneReport

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "server" / "demo_corpus"
TEA = "Tea is brewed with water just off the boil.\nGreen tea wants 80 degrees and two minutes."
TUNE = TuneOptions(
    min_pairs=4,
    max_pairs=64,
    held_out_share=0.45,
    batch_size=8,
    max_steps=3,
    eval_every_steps=1,
    learning_rate=1e-4,
)
"""Bounds that train for real within a minute: enough held-out pairs that the base model is not
already perfect on them, so the kept weights are trained ones (asserted below)."""
QUESTION = "How do I run a Python program under Windows?"

Vectors = dict[int, np.ndarray]


@dataclass
class Tuned:
    """The tuned collection and what was read around its tunes."""

    catalog: CollectionCatalog
    collection: Collection
    embedders: CollectionEmbedders
    report: TuneReport
    base_sections: Vectors
    base_chunks: Vectors
    after_cancel: tuple[Vectors, Vectors, CollectionConfig, list[str]]


def _documents() -> list[Document]:
    files = [DEMO / "faq-general.md", DEMO / "faq-windows.md"]
    documents = [Document(p.stem, p.read_text("utf-8"), SourceType.MARKDOWN) for p in files]
    return [*documents, Document("tea", TEA, SourceType.TEXT, title="Tea")]


def _vectors(collection: Collection) -> tuple[Vectors, Vectors]:
    """(chunk vectors, section vectors) of every live chunk, by row id."""
    chunks: Vectors = {}
    for ids, block in collection.store.iter_live_vectors():
        chunks.update(zip((int(i) for i in ids), block, strict=True))
    found, sections = collection.store.get_section_vectors(list(chunks))
    return chunks, dict(zip((int(i) for i in found), sections, strict=True))


def _model_files(collection: Collection) -> list[str]:
    models = collection.directory / MODELS_DIR
    tuned = sorted(p.name for p in models.iterdir()) if models.is_dir() else []
    dense = sorted(p.name for p in collection.directory.iterdir() if p.name.startswith("dense"))
    return tuned + dense


@pytest.fixture(scope="module")
def tuned(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformerEmbedder
) -> Iterator[Tuned]:
    catalog = CollectionCatalog(tmp_path_factory.mktemp("tune-sections"))
    catalog.open_all()
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=384)
    collection = catalog.create(DEFAULT_TENANT, "faq", config)
    Indexer(embedder, 200, 1 << 20).index(collection, _documents())
    base_chunks, base_sections = _vectors(collection)  # the section LRU now holds them all
    embedders = CollectionEmbedders(embedder, lambda path: SentenceTransformerEmbedder(path, "cpu"))
    tuner = CollectionTuner(embedders, "cpu", default_model_path())
    stop = {"now": False}

    def cancel_at_reembedding(step: TuneProgress) -> None:
        stop["now"] = stop["now"] or step.stage == "save"  # polled first while re-embedding

    with pytest.raises(InterruptedError):
        tuner.tune(
            collection, replace(TUNE, max_steps=1), cancel_at_reembedding, lambda: stop["now"]
        )
    after_cancel = (*_vectors(collection), collection.config, _model_files(collection))
    report = tuner.tune(collection, TUNE)
    yield Tuned(catalog, collection, embedders, report, base_sections, base_chunks, after_cancel)
    catalog.close()


def _tuned_model(tuned: Tuned) -> SentenceTransformerEmbedder:
    path = tuned.collection.directory / MODELS_DIR / tuned.report.model_id
    return SentenceTransformerEmbedder(str(path), device="cpu")


def _section_texts(collection: Collection) -> dict[int, str]:
    """Per live chunk row id, the text its section vector embeds, written out here as
    core/embed/section_vectors.py documents it: the heading path as a header line, then the
    section's chunks joined (a plain-text document of one section: its own text)."""
    chunks = collection.get_chunks(list(_vectors(collection)[0]))
    bodies: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for chunk in sorted(chunks.values(), key=lambda c: (c.document_id, c.ordinal)):
        bodies.setdefault((chunk.document_id, chunk.section_path), []).append(chunk.text)
    out: dict[int, str] = {}
    for row_id, chunk in chunks.items():
        body = "\n".join(bodies[(chunk.document_id, chunk.section_path)])
        if chunk.document_id == "tea":
            body = TEA  # a plain-text document embeds its own text, without the chunker's seams
        out[row_id] = embedding_text(chunk.section_path, body[:SECTION_TEXT_CHARS])
    return out


def test_the_stored_section_vectors_are_what_the_tuned_model_computes(tuned: Tuned) -> None:
    collection, report = tuned.collection, tuned.report
    assert collection.config.tuned_model == report.model_id and collection.config.section_vectors
    assert report.held_out_after > report.held_out_before  # trained weights were kept
    chunks, sections = _vectors(collection)
    assert sorted(sections) == sorted(chunks) == sorted(tuned.base_sections)
    texts = _section_texts(collection)
    distinct = sorted(set(texts.values()))
    assert report.section_vectors == len(distinct) and report.section_seconds > 0.0
    direct = dict(zip(distinct, _tuned_model(tuned).embed_documents(distinct), strict=True))
    for row_id, vector in sections.items():
        assert np.allclose(vector, direct[texts[row_id]], atol=1e-5), row_id
    moved = [float(tuned.base_sections[i] @ v) for i, v in sections.items()]
    assert min(moved) < 0.999  # not the base model's vectors kept by mistake


def test_no_section_vector_read_before_the_swap_is_served_after_it(tuned: Tuned) -> None:
    """The fixture read every section vector before tuning (filling the store's LRU); what is
    served now is what the sections table holds, the tuned model's."""
    store = tuned.collection.store
    ids = sorted(tuned.base_sections)
    found, served = store.get_section_vectors(ids)
    assert found.tolist() == ids
    direct = _tuned_model(tuned).embed_documents([_section_texts(tuned.collection)[ids[0]]])
    assert np.allclose(served[0], direct[0], atol=1e-5)
    assert not np.allclose(served[0], tuned.base_sections[ids[0]], atol=1e-3)


def test_retrieve_mixes_in_the_tuned_section_vectors(tuned: Tuned) -> None:
    collection = tuned.collection
    request = RetrievalRequest(QUESTION, "faq", top_k=5, mode=RetrievalMode.DENSE)
    with ThreadPoolExecutor(2) as pool:
        pipeline = RetrievalPipeline(
            tuned.catalog, tuned.embedders.base, pool, query_embedders=tuned.embedders.queries
        )
        hits = pipeline.retrieve(request).hits
    assert hits and hits[0].chunk.document_id == "faq-windows"
    query = _tuned_model(tuned).embed_queries([QUESTION])[0]
    chunks, sections = _vectors(collection)
    w = request.section_weight
    assert 0.0 < w < 1.0
    for hit in hits:
        row = hit.chunk.row_id
        want = (1 - w) * float(chunks[row] @ query) + w * float(sections[row] @ query)
        assert hit.scores.dense == pytest.approx(want, abs=1e-4)


def test_a_tune_cancelled_while_re_embedding_leaves_the_old_model_and_vectors(
    tuned: Tuned,
) -> None:
    chunks, sections, config, files = tuned.after_cancel
    assert config.tuned_model == "" and config.section_vectors
    assert files == ["dense"]  # neither a tuned model nor its dense index was left
    assert chunks.keys() == tuned.base_chunks.keys()
    assert all(np.array_equal(chunks[i], tuned.base_chunks[i]) for i in chunks)
    assert sections.keys() == tuned.base_sections.keys()
    assert all(np.array_equal(sections[i], tuned.base_sections[i]) for i in sections)
