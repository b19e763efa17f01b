"""The one place a Generator is chosen from settings."""

from __future__ import annotations

import logging
from pathlib import Path

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
        from core.answer.llama_cpp_generator import LlamaCppGenerator, LlamaCppGeneratorConfig

        local = LlamaCppGeneratorConfig(
            model_path=settings.local_model_path,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
        )
        logger.info(
            "generator: local llama.cpp model %s",
            settings.local_model_path or "packaged Gemma 3 270M",
        )
        return LlamaCppGenerator(local)
    from core.answer.extractive_generator import ExtractiveGenerator

    logger.info("generator: extractive (no language model configured)")
    return ExtractiveGenerator(embedder)
