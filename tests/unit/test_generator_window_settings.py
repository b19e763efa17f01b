"""`generator.context_window_tokens` and `generator.prompt_token_ratio`: validation, and the
context window `build_context_window` derives from them for each generator kind."""

from __future__ import annotations

import logging
import math

import pytest

from core.answer.extractive_generator import ExtractiveGenerator
from core.answer.openai_generator import OpenAIGenerator, OpenAIGeneratorConfig
from core.embed.protocol import Embedder
from core.errors import InvalidArgument
from server.generator_factory import build_context_window
from server.settings import GeneratorSettings, load_settings

OPENAI = {"GROUNDWIRE_GENERATOR__BASE_URL": "http://127.0.0.1:9/v1"}
OPENAI_MODEL = {**OPENAI, "GROUNDWIRE_GENERATOR__MODEL": "m"}


def test_defaults_leave_the_window_unset() -> None:
    settings = load_settings(env={}).generator
    assert (settings.context_window_tokens, settings.prompt_token_ratio) == (0, 1.2)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"GROUNDWIRE_GENERATOR__CONTEXT_WINDOW_TOKENS": "63"},
            "generator.context_window_tokens: must be 0 (unset) or between 64 and 10000000",
        ),
        (
            {"GROUNDWIRE_GENERATOR__CONTEXT_WINDOW_TOKENS": "256"},
            "generator.max_tokens: must be less than the generator's context window (256 "
            "tokens, generator.context_window_tokens), to leave room for the prompt",
        ),
        (
            {"GROUNDWIRE_GENERATOR__KIND": "local", "GROUNDWIRE_GENERATOR__MAX_TOKENS": "4096"},
            "generator.max_tokens: must be less than the generator's context window (2048 "
            "tokens, generator.context_window_tokens), to leave room for the prompt",
        ),
        (
            {"GROUNDWIRE_GENERATOR__PROMPT_TOKEN_RATIO": "0.1"},
            "generator.prompt_token_ratio: must be between 0.25 and 4",
        ),
    ],
    ids=["window-too-small", "answer-fills-window", "answer-fills-local-default", "ratio"],
)
def test_invalid_values_name_the_setting_and_the_fix(env: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        load_settings(env={**OPENAI_MODEL, **env})
    assert str(error.value) == message


def _openai(settings: GeneratorSettings) -> OpenAIGenerator:
    return OpenAIGenerator(OpenAIGeneratorConfig(settings.base_url, settings.model))


def test_extractive_reads_no_prompt_and_has_no_window(embedder: Embedder) -> None:
    settings = load_settings(env={"GROUNDWIRE_GENERATOR__CONTEXT_WINDOW_TOKENS": "2048"})
    window = build_context_window(settings.generator, ExtractiveGenerator(embedder), embedder)
    assert window is None


def test_openai_without_a_window_warns_and_does_not_fit(
    embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    settings = load_settings(env=OPENAI_MODEL).generator
    with caplog.at_level(logging.WARNING):
        assert build_context_window(settings, _openai(settings), embedder) is None
    assert "generator.context_window_tokens is not set" in caplog.text


def test_openai_window_estimates_from_the_embedding_tokenizer(embedder: Embedder) -> None:
    env = {
        **OPENAI_MODEL,
        "GROUNDWIRE_GENERATOR__CONTEXT_WINDOW_TOKENS": "4096",
        "GROUNDWIRE_GENERATOR__PROMPT_TOKEN_RATIO": "1.5",
        "GROUNDWIRE_GENERATOR__MAX_TOKENS": "300",
    }
    settings = load_settings(env=env).generator
    window = build_context_window(settings, _openai(settings), embedder)
    assert window is not None
    assert (window.tokens, window.output_tokens) == (4096, 300)
    text = "Espresso is brewed at nine bars of pressure."
    assert window.count(text) == math.ceil(1.5 * embedder.count_tokens(text)) + 1
    assert window.budget_per_token == pytest.approx(1 / 1.5)
    assert "1.5 x the embedding model's tokens" in window.counted_as
