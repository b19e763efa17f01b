"""Answer through the real gRPC server with settings pointing at an OpenAI-compatible endpoint.

The endpoint is llama.cpp's server with the packaged Gemma-3-270M, behind a TCP proxy that
records when the upstream connection closes, so cancellation can be observed from outside.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.settings import GeneratorSettings
from tests.conftest import make_settings, replace_settings
from tests.fake_upstream import TcpProxy
from tests.free_port import free_port
from tests.llm_server import LlamaServer, garden_guides, packaged_gguf_or_skip
from tests.server_harness import ServerThread

pytestmark = pytest.mark.slow
TAG = re.compile(r"\[DOC:\s*([^\]|]+?)\s*\|\s*CHUNK:\s*([^\]]+?)\s*\]")
GUIDE = (
    "# Tower guide\n\n## Height\n\nThe Eiffel Tower is 330 metres tall. It was completed in 1889 "
    "for the World's Fair in Paris.\n"
)


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with LlamaServer(packaged_gguf_or_skip()) as server:
        yield server


def _server(data_dir: Path, base_url: str, **generator: object) -> ServerThread:
    settings = make_settings(data_dir, seed_demo=False)
    fields: dict[str, object] = {
        "base_url": base_url,
        "model": "gemma-3-270m",
        "temperature": 0.8,
        **generator,
    }
    settings = replace_settings(settings, generator=GeneratorSettings(**fields))  # type: ignore[arg-type]
    server = ServerThread(settings).start()
    with grpc.insecure_channel(server.target) as channel:
        stub = ix_grpc.IndexServiceStub(channel)
        stub.CreateCollection(ix.CreateCollectionRequest(name="default"), timeout=30)
        doc = common.Document(document_id="tower.md", text=GUIDE)
        stub.UpsertDocuments(iter([ix.UpsertDocumentsRequest(documents=[doc])]), timeout=60)
    return server


@pytest.fixture(scope="module")
def proxied(
    llama: LlamaServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerThread, TcpProxy]]:
    proxy = TcpProxy(llama.port)
    server = _server(tmp_path_factory.mktemp("llm-data"), proxy.base_url)
    yield server, proxy
    server.stop()
    proxy.close()


def _request(max_tokens: int) -> rs.AnswerRequest:
    return rs.AnswerRequest(
        retrieve=rs.RetrieveRequest(query="How tall is the Eiffel Tower?", top_k=2),
        max_tokens=max_tokens,
    )


def _closed_after(proxy: TcpProxy, moment: float, within_s: float = 2.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if any(t >= moment for t in proxy.upstream_closed_at):
            return True
        time.sleep(0.01)
    return False


def test_settings_switch_answers_to_the_llm(proxied: tuple[ServerThread, TcpProxy]) -> None:
    server, _ = proxied
    with grpc.insecure_channel(server.target) as channel:
        events = list(rs_grpc.RetrievalServiceStub(channel).Answer(_request(24), timeout=120))
    started, summary = events[0].started, events[-1].summary
    deltas = [e.delta.text for e in events[1:-1]]
    assert deltas and summary.text == "".join(deltas)
    assert (summary.generator, summary.model) == ("openai", "gemma-3-270m")
    assert summary.finish_reason in {"stop", "length"} and summary.usage.completion_tokens > 0
    context = {(c.document_id, c.chunk_id) for c in started.retrieval.context.citations}
    cited = TAG.findall(summary.text)
    assert summary.invalid_citations == sum(1 for pair in cited if pair not in context)
    assert {(c.document_id, c.chunk_id) for c in summary.citations} <= context


def test_client_cancel_closes_the_upstream_request(proxied: tuple[ServerThread, TcpProxy]) -> None:
    server, proxy = proxied
    with grpc.insecure_channel(server.target) as channel:
        call = rs_grpc.RetrievalServiceStub(channel).Answer(_request(400), timeout=120)
        deltas = 0
        for event in call:
            deltas += event.WhichOneof("event") == "delta"
            if deltas == 2:
                break
        cancelled_at = time.monotonic()
        call.cancel()
    assert _closed_after(proxy, cancelled_at), (
        "upstream request still open 2 s after the client cancelled"
    )


def test_expired_deadline_closes_the_upstream_request(
    proxied: tuple[ServerThread, TcpProxy],
) -> None:
    server, proxy = proxied
    started_at = time.monotonic()
    with grpc.insecure_channel(server.target) as channel, pytest.raises(grpc.RpcError) as info:
        list(rs_grpc.RetrievalServiceStub(channel).Answer(_request(400), timeout=2.5))
    assert info.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    assert _closed_after(proxy, started_at, within_s=5.0)


def test_unreachable_upstream_is_unavailable_with_the_reason(tmp_path: Path) -> None:
    port = free_port()
    server = _server(tmp_path, f"http://127.0.0.1:{port}/v1", max_retries=0)
    try:
        with grpc.insecure_channel(server.target) as channel, pytest.raises(grpc.RpcError) as info:
            list(rs_grpc.RetrievalServiceStub(channel).Answer(_request(8), timeout=60))
        assert info.value.code() is grpc.StatusCode.UNAVAILABLE
        details = info.value.details()
        assert details.startswith(
            f"upstream model at http://127.0.0.1:{port}/v1 is unreachable (upstream said: "
        )
        assert "Connect" in details
    finally:
        server.stop()


def _index_guides(server: ServerThread) -> None:
    with grpc.insecure_channel(server.target) as channel:
        docs = [common.Document(document_id=i, text=t) for i, t in garden_guides()]
        stub = ix_grpc.IndexServiceStub(channel)
        stub.UpsertDocuments(iter([ix.UpsertDocumentsRequest(documents=docs)]), timeout=120)


def _garden_request(budget_tokens: int) -> rs.AnswerRequest:
    retrieve = rs.RetrieveRequest(
        query="How often are the garden beds watered?",
        top_k=12,
        budget=rs.ContextBudget(max_tokens=budget_tokens),
    )
    return rs.AnswerRequest(retrieve=retrieve, max_tokens=16)


def test_a_prompt_over_the_window_is_unavailable_with_the_fix(
    llama: LlamaServer, tmp_path: Path
) -> None:
    """llama.cpp's server (n_ctx 2048) closes the stream on an oversized prompt; that used to
    come back as an empty answer with finish reason "stop"."""
    server = _server(tmp_path, llama.base_url)
    try:
        _index_guides(server)
        with grpc.insecure_channel(server.target) as channel, pytest.raises(grpc.RpcError) as info:
            list(rs_grpc.RetrievalServiceStub(channel).Answer(_garden_request(4000), timeout=120))
        assert info.value.code() is grpc.StatusCode.UNAVAILABLE
        assert "ended the stream without any text or a finish reason" in info.value.details()
        assert "set generator.context_window_tokens" in info.value.details()
    finally:
        server.stop()


def test_a_configured_window_fits_the_prompt(llama: LlamaServer, tmp_path: Path) -> None:
    server = _server(tmp_path, llama.base_url, context_window_tokens=2048)
    try:
        _index_guides(server)
        with grpc.insecure_channel(server.target) as channel:
            stub = rs_grpc.RetrievalServiceStub(channel)
            events = list(stub.Answer(_garden_request(4000), timeout=180))
        started, summary = events[0].started.retrieval, events[-1].summary
        assert summary.finish_reason in {"stop", "length"} and summary.text
        (warning,) = [w for w in started.warnings if "lowered" in w]
        assert "from 4000 tokens to" in warning and "2048-token context window" in warning
        assert 0 < started.context.budget_tokens < 4000
        assert len(started.context.citations) >= 3  # still a useful context
    finally:
        server.stop()
