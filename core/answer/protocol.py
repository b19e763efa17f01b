"""The generator contract: one Protocol, one module per implementation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ContextPassage:
    """One chunk of the retrieved context as a generator sees it."""

    tag: str  # "[DOC:<document_id> | CHUNK:<chunk_id>]"
    text: str  # the chunk text as placed in the context (possibly truncated)
    section_path: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """Sampling settings; None means the generator's configured default."""

    temperature: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """Everything a generator may use: the rendered prompt, the question and the passages."""

    prompt: str
    query: str
    passages: tuple[ContextPassage, ...]
    params: GenerationParams = GenerationParams()


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Text generated since the previous event."""

    text: str


@dataclass(frozen=True, slots=True)
class GenerationFinished:
    """The last event of a generation: why it stopped and what it cost."""

    finish_reason: str  # "stop" | "length" | "cancelled"
    prompt_tokens: int = 0
    completion_tokens: int = 0


GenerationEvent = TextDelta | GenerationFinished


class Generator(Protocol):
    """Streams an answer. Cancelling the iteration (closing it) must stop upstream work at once.

    Failures raise core.errors.UpstreamFailure (unreachable, 5xx, bad reply), Overloaded (429,
    with retry-after) or DeadlineExceeded (upstream timeout).
    """

    kind: str  # "extractive" | "openai" | "local"
    model: str

    def stream(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        """Yield TextDelta events, then exactly one GenerationFinished."""
        ...

    async def aclose(self) -> None:
        """Release connections or models."""
        ...
