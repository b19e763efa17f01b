"""RerankSettings loading and validation, and build_reranker's choice."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.answer.extractive_generator import ExtractiveGenerator
from core.answer.protocol import GenerationEvent, GenerationFinished, GenerationRequest, TextDelta
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.errors import InvalidArgument
from core.retrieve.rerank.cross_encoder import CrossEncoderReranker
from core.retrieve.rerank.llm_reranker import LlmReranker
from server.reranker_factory import build_reranker
from server.settings import RerankSettings, Settings, load_settings, validate_settings
from tests.tiny_cross_encoder import build_tiny_cross_encoder


class JsonUpstream:
    """Stands in for an upstream LLM behind the Generator Protocol; always ranks [1]."""

    kind = "openai"
    model = "upstream"

    async def stream(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        yield TextDelta("[1]")
        yield GenerationFinished("stop")

    async def aclose(self) -> None:
        """Nothing to release."""


def test_settings_load_from_the_environment() -> None:
    settings = load_settings(
        env={
            "GROUNDWIRE_RERANK__CROSS_ENCODER_PATH": "/models/ms-marco",
            "GROUNDWIRE_RERANK__DEVICE": "cpu",
            "GROUNDWIRE_RERANK__BATCH_SIZE": "16",
            "GROUNDWIRE_RERANK__MAX_DEPTH": "50",
        }
    )
    assert settings.rerank == RerankSettings(
        cross_encoder_path="/models/ms-marco", device="cpu", batch_size=16, max_depth=50
    )
    assert Settings().rerank == RerankSettings()


@pytest.mark.parametrize(
    ("rerank", "message"),
    [
        (RerankSettings(batch_size=0), "rerank.batch_size: must be >= 1"),
        (RerankSettings(max_depth=0), "rerank.max_depth: must be between 1 and 200"),
        (RerankSettings(max_depth=201), "rerank.max_depth: must be between 1 and 200"),
        (
            RerankSettings(cross_encoder_path="/m", llm=True),
            "rerank.llm: set either rerank.cross_encoder_path or rerank.llm = true, not both",
        ),
    ],
    ids=["batch-size", "depth-zero", "depth-too-big", "both"],
)
def test_invalid_settings_name_the_setting(rerank: RerankSettings, message: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        validate_settings(Settings().replace(rerank=rerank))
    assert str(caught.value) == message


def test_nothing_configured_means_no_reranker() -> None:
    assert build_reranker(RerankSettings(), JsonUpstream()) is None


def test_a_cross_encoder_directory_gives_a_cross_encoder(tmp_path: Path) -> None:
    directory = build_tiny_cross_encoder(tmp_path / "ce")
    reranker = build_reranker(
        RerankSettings(cross_encoder_path=str(directory), device="cpu", batch_size=4), None
    )
    assert isinstance(reranker, CrossEncoderReranker)
    assert reranker.device == "cpu"
    assert len(reranker.score("q", ["a", "b"])) == 2


@pytest.mark.parametrize(
    ("rerank", "message"),
    [
        (
            RerankSettings(cross_encoder_path="/no/such/model"),
            "rerank.cross_encoder_path: directory /no/such/model does not exist; point it at a "
            "sentence-transformers CrossEncoder directory, for example ms-marco-MiniLM-L-6-v2 "
            "saved with save_pretrained",
        ),
        (
            RerankSettings(cross_encoder_path=".", device="tpu"),
            'rerank.device: unknown device \'tpu\'; use "auto", "cpu", "cuda" or "cuda:N" '
            "(N a device index)",
        ),
        (
            RerankSettings(cross_encoder_path="/m", llm=True),
            "rerank.llm: set either rerank.cross_encoder_path or rerank.llm = true, not both",
        ),
    ],
    ids=["missing-directory", "unknown-device", "both"],
)
def test_bad_cross_encoder_settings_name_the_setting(rerank: RerankSettings, message: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        build_reranker(rerank, None)
    assert str(caught.value) == message


def test_llm_rerank_uses_the_generator() -> None:
    reranker = build_reranker(RerankSettings(llm=True), JsonUpstream())
    assert isinstance(reranker, LlmReranker)
    assert reranker.name == "llm:upstream"
    assert reranker.score("q", ["a", "b"]) == [1.0, 0.5]


def test_llm_rerank_refuses_the_extractive_generator(
    embedder: SentenceTransformerEmbedder,
) -> None:
    with pytest.raises(InvalidArgument) as caught:
        build_reranker(RerankSettings(llm=True), ExtractiveGenerator(embedder))
    assert str(caught.value) == (
        'rerank.llm: needs a language model: configure generator.base_url (openai) or generator.kind = "local"; '
        "the extractive generator cannot rank passages"
    )
