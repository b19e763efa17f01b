"""The local generator's prompts are fitted to its n_ctx, counted by its own tokenizer.

A real server with the in-process Gemma 3 270M and a 1,024-token window: llama.cpp reports the
prompt's exact token count, so the fit can be checked to the token. Needs the 'local' extra.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.settings import GeneratorKind, GeneratorSettings
from tests.conftest import make_settings, replace_settings
from tests.llm_server import garden_guides, packaged_gguf_or_skip
from tests.server_harness import ServerThread

pytestmark = pytest.mark.slow
WINDOW = 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    packaged_gguf_or_skip()
    generator = GeneratorSettings(
        kind=GeneratorKind.LOCAL, temperature=0.0, max_tokens=24, context_window_tokens=WINDOW
    )
    settings = make_settings(tmp_path_factory.mktemp("local-window"), seed_demo=False)
    running = ServerThread(replace_settings(settings, generator=generator)).start()
    with grpc.insecure_channel(running.target) as channel:
        stub = ix_grpc.IndexServiceStub(channel)
        stub.CreateCollection(ix.CreateCollectionRequest(name="default"), timeout=30)
        docs = [common.Document(document_id=i, text=t) for i, t in garden_guides()]
        stub.UpsertDocuments(iter([ix.UpsertDocumentsRequest(documents=docs)]), timeout=120)
    yield running
    running.stop()


def _answer(server: ServerThread, max_tokens: int, budget: int) -> list[rs.AnswerResponse]:
    retrieve = rs.RetrieveRequest(
        query="How often are the garden beds watered?",
        top_k=12,
        budget=rs.ContextBudget(max_tokens=budget),
    )
    request = rs.AnswerRequest(retrieve=retrieve, max_tokens=max_tokens)
    with grpc.insecure_channel(server.target) as channel:
        return list(rs_grpc.RetrievalServiceStub(channel).Answer(request, timeout=180))


def test_prompt_and_answer_fit_n_ctx_exactly_counted(server: ServerThread) -> None:
    events = _answer(server, max_tokens=24, budget=4000)
    started, summary = events[0].started.retrieval, events[-1].summary
    assert summary.finish_reason in {"stop", "length"} and summary.text
    assert 0 < summary.usage.prompt_tokens <= WINDOW - 24
    assert summary.usage.prompt_tokens > WINDOW // 2, "the window is used, not left empty"
    assert any("lowered from 4000 tokens" in w for w in started.warnings)
    assert "counted by the gemma-3-270m" in " ".join(started.warnings)


def test_an_answer_length_that_leaves_no_room_is_invalid_argument(server: ServerThread) -> None:
    with pytest.raises(grpc.RpcError) as info:
        _answer(server, max_tokens=1000, budget=4000)
    assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "context window is 1024 tokens" in info.value.details()
    assert "lower max_tokens" in info.value.details()
