"""model.runtime = auto (the default): on a CPU queries by the per-token int8 export and passages
by the fp32 export (in a session of their own); a refused int8 build leaves fp32 queries, a
refused fp32 build torch passages; auto-int8 is the same runtime under its old name; auto-fp32
runs queries and passages by the fp32 export (one session when the thread counts agree). The
model's identity stays the source model's (torch's name), collections indexed by either runtime
serve under the other, and whatever keeps the export from loading leaves a torch server, not a
failed start."""

from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.catalog.model_check import ModelCheck
from core.embed.embedder_factory import build_embedder
from core.embed.lazy_embedder import LazyEmbedder, without_loading
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import (
    MIN_COSINE,
    cache_root,
    load_onnx_embedder,
    variant_dir,
    variant_key,
)
from core.embed.onnx_embedder import OnnxEmbedder
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)
from core.embed.split_runtime_embedder import SplitRuntimeEmbedder
from core.indexer import Indexer
from core.models import Document, SourceType
from server.runtime import DEMO_CORPUS, Runtime
from server.settings import load_settings

QUERIES = [
    "How do I copy an object in Python?",
    "Why are floating-point calculations so inaccurate?",
    "How can I make a Python script executable on Unix?",
]
PASSAGES = [
    "Try copy.copy() or copy.deepcopy() for the general case. Not all objects can be copied, "
    "but most can. Some objects can be copied more easily: dictionaries have a copy() method.",
    "Floats are represented in binary, so most decimal fractions cannot be stored exactly; "
    "repr() shows the shortest string that rounds to the same float. " * 6,
]


def _cache_refusing(tmp_path: Path, variant: ModelRuntime, reason: str) -> Path:
    """A copy of the host's ONNX cache under `tmp_path` whose manifest records `variant` as
    refused for `reason` (the verdict a failed verification leaves)."""
    built = variant_dir(Path(default_model_path()), cache_root())
    root = tmp_path / "models"
    shutil.copytree(built, root / built.name, ignore=shutil.ignore_patterns(".lock"))
    manifest_path = root / built.name / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["variants"][variant_key(variant)].update(verified=False, reason=reason)
    manifest_path.write_text(json.dumps(manifest))
    return root


@pytest.fixture(scope="module")
def auto() -> SplitRuntimeEmbedder:
    """The default runtime as the server builds it, from the host's shared ONNX cache."""
    built = build_embedder(default_model_path(), ModelRuntime.AUTO, onnx_cache=cache_root())
    assert isinstance(built, SplitRuntimeEmbedder)
    return built


@pytest.fixture(scope="module")
def auto_fp32() -> SplitRuntimeEmbedder:
    """auto with fp32 queries (the default before per-token int8)."""
    built = build_embedder(default_model_path(), ModelRuntime.AUTO_FP32, onnx_cache=cache_root())
    assert isinstance(built, SplitRuntimeEmbedder)
    return built


def test_auto_is_the_default_runtime() -> None:
    assert load_settings(env={}).model.runtime is ModelRuntime.AUTO
    assert load_settings(env={"GROUNDWIRE_MODEL__RUNTIME": "Auto"}).model.runtime is (
        ModelRuntime.AUTO
    )
    assert not ModelRuntime.AUTO.is_onnx


def test_auto_fp32_embeds_queries_and_documents_with_onnx(
    auto_fp32: SplitRuntimeEmbedder, embedder: SentenceTransformerEmbedder
) -> None:
    auto = auto_fp32
    onnx = load_onnx_embedder(Path(default_model_path()), cache_root(), ModelRuntime.ONNX)
    assert isinstance(auto.documents, OnnxEmbedder) and auto.documents is auto.queries
    np.testing.assert_array_equal(auto.embed_queries(QUERIES), onnx.embed_queries(QUERIES))
    np.testing.assert_array_equal(auto.embed_documents(PASSAGES), onnx.embed_documents(PASSAGES))
    np.testing.assert_allclose(
        auto.embed_documents(PASSAGES), embedder.embed_documents(PASSAGES), atol=1e-5
    )
    cosines = np.sum(auto.embed_queries(QUERIES) * embedder.embed_queries(QUERIES), axis=1)
    assert cosines.min() >= 0.9999, cosines
    assert auto.model_name == embedder.model_name == default_model_path()
    assert auto.query_model_name == f"{default_model_path()} (onnx)"
    assert (auto.dimension, auto.max_tokens, auto.device) == (
        embedder.dimension,
        embedder.max_tokens,
        "cpu",
    )
    assert auto.count_tokens(PASSAGES[1]) == embedder.count_tokens(PASSAGES[1])
    assert load_settings(env={"GROUNDWIRE_MODEL__RUNTIME": "auto-fp32"}).model.runtime is (
        ModelRuntime.AUTO_FP32
    )


@pytest.mark.parametrize("runtime", [ModelRuntime.AUTO, ModelRuntime.AUTO_INT8])
def test_auto_embeds_queries_with_the_int8_export_and_passages_with_fp32(
    embedder: SentenceTransformerEmbedder, runtime: ModelRuntime
) -> None:
    built = build_embedder(default_model_path(), runtime, onnx_cache=cache_root())
    assert isinstance(built, SplitRuntimeEmbedder)
    int8 = load_onnx_embedder(Path(default_model_path()), cache_root(), ModelRuntime.ONNX_INT8)
    np.testing.assert_array_equal(built.embed_queries(QUERIES), int8.embed_queries(QUERIES))
    assert isinstance(built.documents, OnnxEmbedder)
    assert built.documents.runtime is ModelRuntime.ONNX  # passages stay fp32
    np.testing.assert_allclose(
        built.embed_documents(PASSAGES), embedder.embed_documents(PASSAGES), atol=1e-5
    )
    cosines = np.sum(built.embed_queries(QUERIES) * embedder.embed_queries(QUERIES), axis=1)
    assert cosines.min() >= MIN_COSINE, cosines  # the build's verification bar
    assert cosines.min() < 0.99999, cosines  # int8 vectors, not fp32's (1.00000)
    assert built.query_model_name == f"{default_model_path()} (onnx-int8)"
    assert built.model_name == embedder.model_name == default_model_path()
    assert load_settings(env={"GROUNDWIRE_MODEL__RUNTIME": "auto-int8"}).model.runtime is (
        ModelRuntime.AUTO_INT8
    )
    assert not ModelRuntime.AUTO_INT8.is_onnx


def test_a_refused_int8_build_leaves_auto_with_fp32_queries(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reason = "onnx-int8 differs from the torch model: query 2 (alone): 0.9712"
    root = _cache_refusing(tmp_path, ModelRuntime.ONNX_INT8, reason)
    with caplog.at_level(logging.ERROR, logger="core.embed.embedder_factory"):
        served = build_embedder(
            default_model_path(), ModelRuntime.AUTO, onnx_cache=root, lazy_documents=True
        )
    assert isinstance(served, SplitRuntimeEmbedder)
    assert isinstance(served.queries, OnnxEmbedder)
    assert served.queries.runtime is ModelRuntime.ONNX
    assert f"model.runtime onnx-int8 refused, serving with onnx instead: {reason}" in caplog.text


@pytest.mark.parametrize("indexed_by", ["torch", "onnx"])
def test_a_collection_indexed_by_either_runtime_passes_the_model_check_under_the_other(
    tmp_path: Path,
    auto: SplitRuntimeEmbedder,
    embedder: SentenceTransformerEmbedder,
    indexed_by: str,
) -> None:
    onnx = load_onnx_embedder(Path(default_model_path()), cache_root(), ModelRuntime.ONNX)
    writer = embedder if indexed_by == "torch" else onnx
    config = CollectionConfig(embedding_model=writer.model_name, embedding_dim=writer.dimension)
    collection = Collection.open("faq", tmp_path / "faq", config)
    try:
        documents = [
            Document(f"d{i}", text, SourceType.TEXT, f"d{i}.txt") for i, text in enumerate(PASSAGES)
        ]
        Indexer(writer, 200, 1 << 20).index(collection, documents)
        for serving in (auto, embedder, onnx):
            ModelCheck(serving).require(collection)  # raises FailedPrecondition on a mismatch
    finally:
        collection.close()


def test_auto_without_onnxruntime_serves_with_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import raises ImportError
    settings = load_settings(env={"GROUNDWIRE_STORAGE__DATA_DIR": str(tmp_path)})
    Runtime(settings).close()  # start-up does not refuse: auto can do without onnxruntime
    with caplog.at_level(logging.WARNING, logger="core.embed.embedder_factory"):
        served = build_embedder(default_model_path(), ModelRuntime.AUTO, onnx_cache=tmp_path)
    assert isinstance(served, SentenceTransformerEmbedder)
    assert "serving with torch: model.runtime onnx and onnx-int8 need onnxruntime" in caplog.text


def test_an_unusable_onnx_cache_leaves_a_torch_server(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be")
    with caplog.at_level(logging.ERROR, logger="core.embed.embedder_factory"):
        served = build_embedder(default_model_path(), ModelRuntime.AUTO, onnx_cache=blocked)
    assert isinstance(served, SentenceTransformerEmbedder)
    assert "model.runtime onnx could not be built or loaded under" in caplog.text
    assert "serving with torch instead" in caplog.text


def test_the_onnx_cache_lives_outside_the_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "groundwire" / "onnx"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == Path.home() / ".cache" / "groundwire" / "onnx"
    assert cache_root(str(tmp_path / "mine")) == tmp_path / "mine"
    configured = load_settings(env={"GROUNDWIRE_MODEL__ONNX_CACHE_DIR": str(tmp_path / "mine")})
    assert cache_root(configured.model.onnx_cache_dir) == tmp_path / "mine"


def test_a_reader_loads_the_passage_session_only_on_first_use(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    """lazy_documents (reader processes): same identity and token counts before the load, the
    model check by the query session, the passage session's vectors once a passage is embedded."""
    lazy = build_embedder(
        default_model_path(),
        ModelRuntime.AUTO,
        onnx_cache=cache_root(),
        onnx_threads=1,
        document_threads=2,
        lazy_documents=True,
    )
    assert isinstance(lazy, SplitRuntimeEmbedder)
    documents = lazy.documents
    assert isinstance(documents, LazyEmbedder) and not documents.loaded
    identity = (lazy.model_name, lazy.dimension, lazy.max_tokens, lazy.device)
    assert identity == (embedder.model_name, embedder.dimension, embedder.max_tokens, "cpu")
    assert lazy.additive_token_counts == embedder.additive_token_counts
    texts = [f.read_text("utf-8") for f in sorted(DEMO_CORPUS.glob("*.md"))]
    texts += [line for text in texts for line in text.splitlines() if line.strip()]
    assert [lazy.count_tokens(t) for t in texts] == embedder.count_tokens_batch(texts)
    int8 = load_onnx_embedder(Path(default_model_path()), cache_root(), ModelRuntime.ONNX_INT8)
    np.testing.assert_array_equal(lazy.embed_queries(QUERIES), int8.embed_queries(QUERIES))
    config = CollectionConfig(embedding_model=embedder.model_name, embedding_dim=384)
    collection = Collection.open("faq", tmp_path / "faq", config)
    try:
        passages = [Document("d0", PASSAGES[0], SourceType.TEXT, "d0.txt")]
        Indexer(embedder, 200, 1 << 20).index(collection, passages)
        assert without_loading(lazy) is lazy.queries
        ModelCheck(without_loading(lazy)).require(collection)
    finally:
        collection.close()
    assert not documents.loaded  # nothing so far needed the passage session
    with caplog.at_level(logging.INFO, logger="core.embed.embedder_factory"):
        vectors = lazy.embed_documents(PASSAGES)
    np.testing.assert_allclose(vectors, embedder.embed_documents(PASSAGES), atol=1e-5)
    assert documents.loaded and without_loading(lazy) is lazy
    assert "passages by onnx in a session of 2 thread(s)" in caplog.text
    assert lazy.count_tokens(PASSAGES[1]) == embedder.count_tokens(PASSAGES[1])


def test_the_query_session_runs_the_threads_it_is_given(auto: SplitRuntimeEmbedder) -> None:
    """What `model.onnx_threads` resolves to (server/process_count.py) reaches onnxruntime."""
    built = build_embedder(
        default_model_path(), ModelRuntime.AUTO, onnx_cache=cache_root(), onnx_threads=1
    )
    assert isinstance(built, SplitRuntimeEmbedder)
    assert isinstance(built.queries, OnnxEmbedder) and built.queries.threads == 1
    np.testing.assert_allclose(built.embed_queries(QUERIES), auto.embed_queries(QUERIES), atol=1e-5)


def test_passages_get_a_session_of_their_own_when_given_more_threads(
    auto: SplitRuntimeEmbedder, embedder: SentenceTransformerEmbedder
) -> None:
    """`document_threads` (the server gives every core to ingest, each process's queries their
    share): a second onnxruntime session of the same export, the same vectors."""
    for runtime in (ModelRuntime.AUTO, ModelRuntime.ONNX):
        built = build_embedder(
            default_model_path(),
            runtime,
            onnx_cache=cache_root(),
            onnx_threads=1,
            document_threads=2,
        )
        assert isinstance(built, SplitRuntimeEmbedder), runtime
        queries, documents = built.queries, built.documents
        assert isinstance(queries, OnnxEmbedder) and isinstance(documents, OnnxEmbedder)
        assert (queries.threads, documents.threads) == (1, 2)
        np.testing.assert_allclose(
            built.embed_documents(PASSAGES), auto.embed_documents(PASSAGES), atol=1e-6
        )
        assert built.count_tokens(PASSAGES[1]) == embedder.count_tokens(PASSAGES[1])
    assert built.model_name == f"{default_model_path()} (onnx)"  # explicit onnx: its own name
    same = build_embedder(
        default_model_path(),
        ModelRuntime.ONNX,
        onnx_cache=cache_root(),
        onnx_threads=2,
        document_threads=2,
    )
    assert isinstance(same, OnnxEmbedder)  # one session when the counts agree


def test_a_refused_fp32_build_leaves_auto_with_torch_passages(
    tmp_path: Path, embedder: SentenceTransformerEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    reason = "onnx differs from the torch model: passage 1: 0.9712"
    root = _cache_refusing(tmp_path, ModelRuntime.ONNX, reason)
    with caplog.at_level(logging.ERROR, logger="core.embed.embedder_factory"):
        served = build_embedder(default_model_path(), ModelRuntime.AUTO, onnx_cache=root)
    assert isinstance(served, SplitRuntimeEmbedder)
    assert isinstance(served.queries, OnnxEmbedder)
    assert served.queries.runtime is ModelRuntime.ONNX_INT8
    assert isinstance(served.documents, SentenceTransformerEmbedder)
    assert served.model_name == embedder.model_name == default_model_path()
    assert f"model.runtime onnx refused, serving with torch instead: {reason}" in caplog.text
