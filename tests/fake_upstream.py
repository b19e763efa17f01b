"""Protocol-level stand-ins for an OpenAI-compatible server, and a TCP proxy that watches closes.

FakeUpstream answers each POST from a script (status codes, bodies, SSE streams cut short);
SilentUpstream accepts connections and never answers; TcpProxy sits between a client and a real
server and records when it closes the upstream connection.
"""

from __future__ import annotations

import json
import selectors
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a plain status + body, or (with `sse`) a streamed 200."""

    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    sse: Sequence[dict[str, Any]] = ()  # completion chunks sent as `data:` events
    cut: bool = False  # drop the connection after the SSE events, without [DONE]


def completion_chunk(text: str, finish_reason: str | None = None) -> dict[str, Any]:
    """A legacy /v1/completions stream chunk."""
    choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}
    return {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": "fake",
            "choices": [choice]}  # fmt: skip


def chat_chunk(
    text: str | None, finish_reason: str | None = None, usage: tuple[int, int] | None = None
) -> dict[str, Any]:
    """A /v1/chat/completions stream chunk; with `usage` (prompt, completion) and no choices."""
    chunk: dict[str, Any] = {"id": "chat-1", "object": "chat.completion.chunk", "created": 0,
                             "model": "fake", "choices": []}  # fmt: skip
    if usage is not None:
        chunk["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                          "total_tokens": sum(usage)}  # fmt: skip
        return chunk
    delta = {"role": "assistant", "content": text}
    chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    return chunk


class FakeUpstream:
    """An HTTP server on 127.0.0.1:0 whose n-th request gets `script(n)` (n counts from 1)."""

    def __init__(self, script: Callable[[int], Reply]) -> None:
        self.script = script
        self.hits = 0
        self.authorization: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                fake.bodies.append(json.loads(body or b"{}"))
                fake.hits += 1
                fake.authorization.append(self.headers.get("Authorization", ""))
                reply = fake.script(fake.hits)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.sse:
                    self._stream(reply)
                    return
                body = reply.body.encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stream(self, reply: Reply) -> None:
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                events = [f"data: {json.dumps(chunk)}\n\n" for chunk in reply.sse]
                for event in events + ([] if reply.cut else ["data: [DONE]\n\n"]):
                    data = event.encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                if reply.cut:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(b"0\r\n\r\n")

        return Handler


class SilentUpstream:
    """A listening socket that completes TCP handshakes (via the backlog) and never answers."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def close(self) -> None:
        self._sock.close()


class TcpProxy:
    """Forwards 127.0.0.1:port to `upstream_port`, noting when each upstream socket is closed."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.connections = 0
        self.upstream_closed_at: list[float] = []  # time.monotonic() of each close
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        with selectors.DefaultSelector() as selector, client, upstream:
            selector.register(client, selectors.EVENT_READ, upstream)
            selector.register(upstream, selectors.EVENT_READ, client)
            while True:
                for key, _ in selector.select():
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    try:
                        data = source.recv(65536)
                    except OSError:
                        data = b""
                    if not data:  # one side closed: close both, as a TCP hop would
                        if source is client:
                            upstream.close()
                            self.upstream_closed_at.append(time.monotonic())
                        return
                    key.data.sendall(data)
