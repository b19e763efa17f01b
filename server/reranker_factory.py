"""The one place a Reranker is chosen from settings."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from core.answer.protocol import Generator
from core.embed.device import select_device
from core.errors import InvalidArgument
from core.retrieve.rerank.protocol import Reranker
from server.settings import RerankSettings

logger = logging.getLogger(__name__)

MISSING_MODEL = (
    "directory {path} does not exist; point it at a sentence-transformers CrossEncoder "
    "directory, for example ms-marco-MiniLM-L-6-v2 saved with save_pretrained"
)
EXTRACTIVE_CANNOT_RANK = (
    "needs a language model: configure generator.base_url (openai) or "
    'generator.kind = "local"; the extractive generator cannot rank passages'
)


def build_reranker(
    settings: RerankSettings,
    generator: Generator | None,
    loop: asyncio.AbstractEventLoop | None = None,
) -> Reranker | None:
    """A cross-encoder when `cross_encoder_path` is set, the LLM reranker when `llm` is, else None.

    `loop` is the event loop `generator` runs on (the server's); the LLM reranker's blocking
    path submits its generation there. Raises InvalidArgument naming the setting to fix.
    """
    if settings.cross_encoder_path and settings.llm:
        raise InvalidArgument.field(
            "rerank.llm", "set either rerank.cross_encoder_path or rerank.llm = true, not both"
        )
    if settings.cross_encoder_path:
        return _cross_encoder(settings)
    if settings.llm:
        if generator is None or generator.kind == "extractive":
            raise InvalidArgument.field("rerank.llm", EXTRACTIVE_CANNOT_RANK)
        from core.retrieve.rerank.llm_reranker import LlmReranker

        logger.info("reranker: LLM through the %s generator (%s)", generator.kind, generator.model)
        return LlmReranker(generator, loop=loop)
    logger.info("reranker: none configured")
    return None


def _cross_encoder(settings: RerankSettings) -> Reranker:
    path = Path(settings.cross_encoder_path)
    if not path.is_dir():
        raise InvalidArgument.field("rerank.cross_encoder_path", MISSING_MODEL.format(path=path))
    try:
        choice = select_device(settings.device)
    except InvalidArgument as exc:
        description = exc.violations[0].description if exc.violations else str(exc)
        raise InvalidArgument.field("rerank.device", description) from None
    from core.retrieve.rerank.cross_encoder import CrossEncoderReranker

    logger.info("reranker: cross-encoder %s on %s (%s)", path, choice.device, choice.reason)
    return CrossEncoderReranker(str(path), device=choice.device, batch_size=settings.batch_size)
