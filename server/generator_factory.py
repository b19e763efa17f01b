"""The one place a Generator, and the context window its prompts must fit, is chosen from
settings."""

from __future__ import annotations

import logging
import math
from pathlib import Path

from core.answer.context_window import ContextWindow
from core.answer.protocol import Generator
from core.embed.protocol import Embedder
from server.settings import GeneratorKind, GeneratorSettings

logger = logging.getLogger(__name__)


def build_generator(settings: GeneratorSettings, embedder: Embedder) -> Generator:
    """Extractive by default; openai when a base_url is configured; local on request."""
    kind = settings.resolved_kind()
    if kind is GeneratorKind.OPENAI:
        from core.answer.openai_generator import OpenAIApi, OpenAIGenerator, OpenAIGeneratorConfig
        from core.answer.secrets import load_api_key

        key = settings.api_key or load_api_key(
            file=Path(settings.api_key_file) if settings.api_key_file else None
        )
        config = OpenAIGeneratorConfig(
            base_url=settings.base_url,
            model=settings.model,
            api_key=key,
            api=OpenAIApi(settings.api),
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            timeout_s=settings.timeout_s,
            max_retries=settings.max_retries,
        )
        logger.info(
            "generator: openai-compatible endpoint %s, model %s", settings.base_url, settings.model
        )
        return OpenAIGenerator(config)
    if kind is GeneratorKind.LOCAL:
        from core.answer.llama_cpp_generator import (
            DEFAULT_N_CTX,
            LlamaCppGenerator,
            LlamaCppGeneratorConfig,
        )

        local = LlamaCppGeneratorConfig(
            model_path=settings.local_model_path,
            n_ctx=settings.context_window_tokens or DEFAULT_N_CTX,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
        )
        logger.info(
            "generator: local llama.cpp model %s",
            settings.local_model_path or "packaged Gemma 3 270M",
        )
        return LlamaCppGenerator(local)
    from core.answer.extractive_generator import ExtractiveGenerator

    logger.info(
        "generator: extractive (no language model configured), sentence scoring %s",
        settings.extractive_scoring.value,
    )
    return ExtractiveGenerator(
        embedder,
        scoring=settings.extractive_scoring,
        candidates=settings.extractive_candidates,
    )


def build_context_window(
    settings: GeneratorSettings, generator: Generator, embedder: Embedder
) -> ContextWindow | None:
    """The window Answer prompts must fit: the local model's n_ctx, counted with its own
    tokenizer; for openai the configured `context_window_tokens`, estimated from the embedding
    model's count times `prompt_token_ratio` (None, and a warning, when it is unset); none for
    the extractive generator, which reads no prompt."""
    from core.answer.llama_cpp_generator import LlamaCppGenerator

    if isinstance(generator, LlamaCppGenerator):
        return ContextWindow(
            tokens=generator.config.n_ctx,
            output_tokens=settings.max_tokens,
            count=generator.count_prompt_tokens,
            counted_as=f"counted by the {generator.model} tokenizer",
        )
    if settings.resolved_kind() is not GeneratorKind.OPENAI:
        return None
    if not settings.context_window_tokens:
        logger.warning(
            "generator.context_window_tokens is not set: Answer prompts are not fitted to the "
            "model's context window, and a prompt that overflows it fails upstream; set it to "
            "the window the endpoint serves (llama.cpp's --n_ctx, vLLM's max_model_len)"
        )
        return None
    ratio = settings.prompt_token_ratio

    def estimate(prompt: str) -> int:
        return math.ceil(ratio * embedder.count_tokens(prompt)) + 1  # + a BOS token

    return ContextWindow(
        tokens=settings.context_window_tokens,
        output_tokens=settings.max_tokens,
        count=estimate,
        counted_as=f"estimated as {ratio:g} x the embedding model's tokens",
        budget_per_token=1 / ratio,
    )
