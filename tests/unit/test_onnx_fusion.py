"""The fp32 variant in onnxruntime's fused transformer operators, against the plain export and
torch: served when its attention fuses, the plain export when it does not or is refused."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

import core.embed.onnx_build as onnx_build
import core.embed.onnx_verification as onnx_verification
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import (
    FUSED_FILE,
    MIN_COSINE,
    VARIANT_FILES,
    cache_root,
    load_onnx_embedder,
    session_on,
    variant_dir,
)
from core.embed.onnx_embedder import OnnxEmbedder
from core.embed.onnx_export import export_encoder
from core.embed.onnx_fusion import Fusion, fuse_encoder
from core.embed.onnx_verification import VerificationResult
from core.embed.sentence_transformer_embedder import (
    SentenceTransformerEmbedder,
    default_model_path,
)

MODEL = Path(default_model_path())
DEMO = Path(__file__).resolve().parents[2] / "server" / "demo_corpus"


@pytest.fixture(scope="module")
def built() -> Path:
    """The bundled model's build directory in the host's shared cache (fp32 built there at most
    once; tests that change the build work in their own cache)."""
    load_onnx_embedder(MODEL, cache_root(), ModelRuntime.ONNX)
    return variant_dir(MODEL, cache_root())


def _manifest(directory: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((directory / "manifest.json").read_text())
    return manifest


def _session_of(directory: Path, file: str) -> OnnxEmbedder:
    """An embedder on `file` of the build in `directory` (its tokenizer and spec)."""
    return session_on(directory, file, ModelRuntime.ONNX, model_name=str(MODEL))


def _texts() -> tuple[list[str], list[str]]:
    """Real questions (the demo FAQ headings) and passages (long paragraphs, and whole pages the
    model cuts at 256 tokens)."""
    queries: list[str] = []
    passages: list[str] = []
    for path in sorted(DEMO.glob("faq-*.md")):
        text = path.read_text("utf-8")
        queries += [line.lstrip("# ") for line in text.splitlines() if line.startswith("## ")]
        passages += [p for p in text.split("\n\n") if len(p) > 200][:6] + [text[:6000]]
    return queries, passages


def test_the_fp32_variant_serves_the_fused_graph(built: Path) -> None:
    entry = _manifest(built)["variants"]["onnx"]
    assert entry["file"] == FUSED_FILE and entry["verified"] is True
    assert "Attention 6" in entry["notes"]  # one per MiniLM-L6 layer
    graph = onnx.load(str(built / FUSED_FILE), load_external_data=False)
    kinds = {node.op_type for node in graph.graph.node}
    assert {"Attention", "SkipLayerNormalization", "EmbedLayerNormalization"} <= kinds
    assert "Softmax" not in kinds  # the attention is one kernel, not spelled out


def test_fused_vectors_match_the_plain_export_and_torch(
    built: Path, embedder: SentenceTransformerEmbedder
) -> None:
    fused = _session_of(built, FUSED_FILE)
    plain = _session_of(built, VARIANT_FILES[ModelRuntime.ONNX])
    queries, passages = _texts()
    assert len(queries) >= 20 and len(passages) >= 10
    for texts, fast, reference, torch in (
        (queries, fused.embed_queries, plain.embed_queries, embedder.embed_queries),
        (passages, fused.embed_documents, plain.embed_documents, embedder.embed_documents),
    ):
        vectors = fast(texts)
        to_plain = np.sum(vectors * reference(texts), axis=1)
        to_torch = np.sum(vectors * torch(texts), axis=1)
        assert to_plain.min() >= 0.99999, to_plain.min()
        assert to_torch.min() >= MIN_COSINE, to_torch.min()
        alone = np.vstack([fast([text]) for text in texts[:8]])  # padding does not leak in
        np.testing.assert_allclose(alone, vectors[:8], atol=1e-5)


def test_an_export_whose_attention_does_not_fuse_is_not_applied(
    built: Path, tmp_path: Path
) -> None:
    # the plain export traces torch's scaled-dot-product attention: the optimizer fuses the
    # layer norms and GELUs around it, but not the attention, which is what pays
    target = tmp_path / "fused.onnx"
    fusion = fuse_encoder(built / VARIANT_FILES[ModelRuntime.ONNX], target, 12, 384)
    assert fusion.applied is False and fusion.reason == "no attention was fused"
    assert fusion.operators.get("SkipLayerNormalization", 0) > 0
    assert not target.exists()


def test_the_eager_export_leaves_the_model_as_it_was(tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(MODEL), device="cpu", local_files_only=True)
    hf_config: Any = getattr(model[0], "auto_model").config  # noqa: B009 - typed as a Module
    before = hf_config._attn_implementation
    export_encoder(model, tmp_path / "eager.onnx", eager_attention=True)
    assert hf_config._attn_implementation == before
    kinds = {node.op_type for node in onnx.load(str(tmp_path / "eager.onnx")).graph.node}
    assert "Softmax" in kinds and "IsNaN" not in kinds  # eager attention, not SDPA's pattern
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("failure", ["not fused", "refused"])
def test_without_a_verified_fused_graph_the_plain_export_serves(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    failure: str,
) -> None:
    if failure == "not fused":
        monkeypatch.setattr(
            "core.embed.onnx_fusion.fuse_encoder",
            lambda *args: Fusion(False, {}, "the optimizer failed: RuntimeError: boom"),
        )
    else:
        verify = onnx_verification.verify_against_torch

        def refuse_fused(model: object, embedder: OnnxEmbedder) -> VerificationResult:
            result = verify(model, embedder)
            if embedder.source.name == FUSED_FILE:
                return VerificationResult(False, "query 2 (alone): 0.9512", 0.9512, 0.99, 26)
            return result

        monkeypatch.setattr(onnx_build, "verify_against_torch", refuse_fused)
    with caplog.at_level(logging.INFO, logger="core.embed"):
        served = load_onnx_embedder(MODEL, tmp_path, ModelRuntime.ONNX)
    directory = variant_dir(MODEL, tmp_path)
    entry = _manifest(directory)["variants"]["onnx"]
    assert entry["file"] == "model.onnx" and entry["verified"] is True
    assert served.source == directory / "model.onnx"
    if failure == "not fused":
        assert "the fp32 export stays unfused: the optimizer failed" in caplog.text
        assert entry["notes"] == "the plain export"
    else:
        assert (
            entry["notes"] == "model.fused.onnx refused: query 2 (alone): 0.9512; the plain export"
        )
        assert "model.fused.onnx refused: query 2 (alone): 0.9512; trying model.onnx" in caplog.text
    reused = load_onnx_embedder(MODEL, tmp_path, ModelRuntime.ONNX)  # the verdict is kept
    assert reused.source == directory / "model.onnx"
