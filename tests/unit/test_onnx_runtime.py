"""The ONNX embedding runtimes against the real torch model: built once, verified, cached, reused,
rebuilt when corrupt, refused when recorded as failing, shared by threads, rejected when misnamed."""

from __future__ import annotations

import json
import logging
import shutil
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from core.cache.query_embedding_cache import QueryEmbeddingCache
from core.embed.embedder_factory import build_embedder
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import (
    MIN_COSINE,
    OnnxRefused,
    cache_root,
    load_onnx_embedder,
    model_fingerprint,
    variant_dir,
    variant_file,
    variant_key,
)
from core.embed.onnx_embedder import OnnxEmbedder
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)
from core.errors import InvalidArgument
from server.runtime import Runtime
from server.settings import load_settings

DEMO = Path(__file__).resolve().parents[2] / "server" / "demo_corpus"
ONNX_RUNTIMES = [ModelRuntime.ONNX, ModelRuntime.ONNX_INT8]


@pytest.fixture(scope="module")
def onnx_cache() -> Path:
    """Both ONNX variants of the bundled model in the host's shared cache (the one servers use by
    default), built and verified there at most once; tests that damage files work on copies."""
    root = cache_root()
    for runtime in ONNX_RUNTIMES:
        load_onnx_embedder(Path(default_model_path()), root, runtime)
    return root


def _copy(onnx_cache: Path, root: Path) -> Path:
    """A private copy of the bundled model's build (only its directory) under `root`."""
    built = variant_dir(Path(default_model_path()), onnx_cache)
    shutil.copytree(built, root / built.name, ignore=shutil.ignore_patterns(".lock"))
    return root


def _load(root: Path, runtime: ModelRuntime) -> OnnxEmbedder:
    return load_onnx_embedder(Path(default_model_path()), root, runtime)


def _demo_texts() -> tuple[list[str], list[str]]:
    """Real questions (the FAQ headings) and real passages (paragraphs, some past 256 tokens)."""
    queries: list[str] = []
    passages: list[str] = []
    for path in sorted(DEMO.glob("faq-*.md")):
        text = path.read_text("utf-8")
        queries += [
            line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("## ")
        ][:6]
        paragraphs = [p.strip() for p in text.split("\n\n") if len(p.strip()) > 200]
        passages += paragraphs[:4]
        passages.append(text[:6000])  # far past the model's 256 tokens: truncated
    return queries, passages


@pytest.mark.parametrize("runtime", ONNX_RUNTIMES, ids=lambda r: r.value)
def test_onnx_vectors_match_torch_on_real_texts(
    onnx_cache: Path, embedder: SentenceTransformerEmbedder, runtime: ModelRuntime
) -> None:
    onnx = _load(onnx_cache, runtime)
    queries, passages = _demo_texts()
    assert len(queries) >= 20 and len(passages) >= 20
    assert max(embedder.count_tokens(p) for p in passages) > 256
    query_cosines = np.sum(onnx.embed_queries(queries) * embedder.embed_queries(queries), axis=1)
    passage_cosines = np.sum(
        onnx.embed_documents(passages) * embedder.embed_documents(passages), axis=1
    )
    assert query_cosines.min() >= MIN_COSINE, query_cosines.min()
    assert passage_cosines.min() >= MIN_COSINE, passage_cosines.min()
    vectors = onnx.embed_documents(passages)
    assert vectors.dtype == np.float32 and vectors.shape == (len(passages), embedder.dimension)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert onnx.embed_queries([]).shape == (0, embedder.dimension)
    assert onnx.max_tokens == embedder.max_tokens
    assert [onnx.count_tokens(p) for p in passages[:5]] == [
        embedder.count_tokens(p) for p in passages[:5]
    ]
    assert onnx.additive_token_counts == embedder.additive_token_counts


def test_second_load_reuses_the_verified_files(
    onnx_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = variant_dir(Path(default_model_path()), onnx_cache)
    before = {p.name: p.stat().st_mtime_ns for p in directory.glob("*.onnx")}
    with caplog.at_level(logging.INFO, logger="core.embed.onnx_build"):
        _load(onnx_cache, ModelRuntime.ONNX_INT8)
    # a cache shared by hosts with and without VNNI may hold both int8 files
    assert {variant_file(r) for r in ONNX_RUNTIMES} <= set(before)
    assert {p.name: p.stat().st_mtime_ns for p in directory.glob("*.onnx")} == before
    assert "embedding runtime onnx-int8: reusing" in caplog.text
    assert "building" not in caplog.text
    manifest = json.loads((directory / "manifest.json").read_text())
    for runtime in ONNX_RUNTIMES:
        assert manifest["variants"][variant_key(runtime)]["verified"] is True
        assert manifest["variants"][variant_key(runtime)]["min_cosine"] >= MIN_COSINE


@pytest.mark.parametrize("damage", ["truncated", "missing"])
def test_a_corrupt_or_missing_file_is_rebuilt(
    onnx_cache: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    embedder: SentenceTransformerEmbedder,
    damage: str,
) -> None:
    root = _copy(onnx_cache, tmp_path / "models")
    directory = variant_dir(Path(default_model_path()), root)
    target = directory / variant_file(ModelRuntime.ONNX_INT8)
    if damage == "truncated":
        target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])
    else:
        target.unlink()
    with caplog.at_level(logging.INFO, logger="core.embed.onnx_build"):
        rebuilt = _load(root, ModelRuntime.ONNX_INT8)
    assert f"{target.name} is missing or corrupt; rebuilding" in caplog.text
    assert "onnx-int8 verified against torch" in caplog.text
    assert (
        target.stat().st_size
        == (variant_dir(Path(default_model_path()), onnx_cache) / target.name).stat().st_size
    )
    texts = ["How do I make an executable from a Python script?"]
    assert float(rebuilt.embed_queries(texts)[0] @ embedder.embed_queries(texts)[0]) >= MIN_COSINE


def test_a_variant_recorded_as_failing_is_refused_and_torch_serves(
    onnx_cache: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _copy(onnx_cache, tmp_path / "models")
    manifest_path = variant_dir(Path(default_model_path()), root) / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    reason = "onnx-int8 differs from the torch model: passage 3 (alone): 0.9712"
    manifest["variants"][variant_key(ModelRuntime.ONNX_INT8)].update(verified=False, reason=reason)
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(OnnxRefused, match="passage 3"):
        _load(root, ModelRuntime.ONNX_INT8)
    with caplog.at_level(logging.ERROR, logger="core.embed.embedder_factory"):
        served = build_embedder(default_model_path(), ModelRuntime.ONNX_INT8, onnx_cache=root)
    assert isinstance(served, SentenceTransformerEmbedder)
    assert f"model.runtime onnx-int8 refused, serving with torch instead: {reason}" in caplog.text


def test_one_session_serves_concurrent_threads(onnx_cache: Path) -> None:
    onnx = _load(onnx_cache, ModelRuntime.ONNX)
    queries, passages = _demo_texts()
    work = [passages[i : i + 3] for i in range(0, 24, 3)]
    serial = [onnx.embed_documents(texts) for texts in work]
    results: dict[int, np.ndarray] = {}
    start = threading.Barrier(len(work))

    def run(i: int) -> None:
        start.wait()
        results[i] = onnx.embed_documents(work[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(work))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i, expected in enumerate(serial):
        np.testing.assert_allclose(results[i], expected, atol=1e-5)


def test_a_batch_split_into_length_groups_gives_each_text_its_own_vector(
    onnx_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mixed batch runs as several padded calls (length_groups) and every text, wherever it
    lands, gets the vector it gets alone: the split changes the cost, not the result."""
    onnx = _load(onnx_cache, ModelRuntime.ONNX)
    queries, passages = _demo_texts()
    texts = [*queries[:10], *passages[:6], queries[0] + " " + passages[0][:300]]
    calls: list[int] = []
    forward = onnx._forward
    monkeypatch.setattr(onnx, "_forward", lambda rows: calls.append(len(rows)) or forward(rows))
    batched = onnx.embed_queries(texts)
    assert len(calls) > 1 and sum(calls) == len(texts)
    alone = np.vstack([onnx.embed_queries([text]) for text in texts])
    np.testing.assert_allclose(batched, alone, atol=1e-5)


def test_runtime_is_part_of_the_model_name_and_the_query_cache_key(
    onnx_cache: Path, embedder: SentenceTransformerEmbedder
) -> None:
    int8 = _load(onnx_cache, ModelRuntime.ONNX_INT8)
    assert int8.model_name == f"{default_model_path()} (onnx-int8)"
    torch_cache = QueryEmbeddingCache(embedder)
    int8_cache = torch_cache.for_embedder(int8)
    query = ["How do I run a Python program under Windows?"]
    from_torch = torch_cache.embed_queries(query)
    from_int8 = int8_cache.embed_queries(query)
    np.testing.assert_array_equal(from_int8, int8.embed_queries(query))
    assert not np.array_equal(from_torch, from_int8)  # no vector of the other runtime came back


def test_fingerprint_follows_the_files_not_the_path(tmp_path: Path) -> None:
    copy = tmp_path / "tuned-model"
    shutil.copytree(default_model_path(), copy)
    assert model_fingerprint(copy) == model_fingerprint(Path(default_model_path()))
    (copy / "config_sentence_transformers.json").write_text(
        (copy / "config_sentence_transformers.json").read_text() + "\n"
    )
    assert model_fingerprint(copy) != model_fingerprint(Path(default_model_path()))


def test_an_unknown_runtime_is_rejected_naming_the_valid_values() -> None:
    with pytest.raises(InvalidArgument) as caught:
        load_settings(env={"GROUNDWIRE_MODEL__RUNTIME": "onnx-fp16"})
    assert str(caught.value) == (
        "model.runtime: cannot use 'onnx-fp16' as ModelRuntime; one of: auto, auto-fp32, auto-int8, "
        "torch, onnx, onnx-int8"
    )
    settings = load_settings(env={"GROUNDWIRE_MODEL__RUNTIME": "ONNX-INT8"})
    assert settings.model.runtime is ModelRuntime.ONNX_INT8


def test_without_onnxruntime_start_up_fails_naming_the_pip_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import raises ImportError
    settings = load_settings(
        env={"GROUNDWIRE_MODEL__RUNTIME": "onnx", "GROUNDWIRE_STORAGE__DATA_DIR": str(tmp_path)}
    )
    with pytest.raises(RuntimeError) as caught:
        Runtime(settings)
    assert 'pip install "groundwire[onnx]"' in str(caught.value)
    assert "model.runtime onnx and onnx-int8 need onnxruntime" in str(caught.value)
