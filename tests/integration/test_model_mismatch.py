"""A data directory served with another embedding model: Retrieve, Answer, upserts and memories get
FAILED_PRECONDITION naming the fix instead of silently searching the wrong vector space; the same
directory served with its own model again works, with nothing lost.

The other model is the bundled one with its word embeddings permuted and saved as a real
sentence-transformers directory: same width, same tokenizer, different vectors.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import grpc
import pytest
import torch
from safetensors.torch import load_file, save_file

from core.embed.sentence_transformer_embedder import default_model_path
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from server.settings import ModelSettings
from tests.conftest import make_settings, replace_settings
from tests.server_harness import ServerThread

pytestmark = pytest.mark.slow
WORDS = "embeddings.word_embeddings.weight"


def _other_model(directory: Path) -> Path:
    shutil.copytree(default_model_path(), directory)
    weights = directory / "model.safetensors"
    tensors = load_file(str(weights))
    generator = torch.Generator().manual_seed(5)
    order = torch.randperm(tensors[WORDS].shape[0], generator=generator)
    tensors[WORDS] = tensors[WORDS][order].contiguous()
    save_file(tensors, str(weights), metadata={"format": "pt"})
    return directory


def _serve(data_dir: Path, model_path: str = "") -> ServerThread:
    settings = make_settings(data_dir, seed_demo=False)
    model = ModelSettings(device="cpu", embedding_model_path=model_path)
    return ServerThread(replace_settings(settings, model=model)).start()


def _upsert(channel: grpc.Channel, document_id: str, text: str) -> None:
    request = ix.UpsertDocumentsRequest(
        documents=[common.Document(document_id=document_id, text=text)]
    )
    ix_grpc.IndexServiceStub(channel).UpsertDocuments(iter([request]), timeout=60)


def _retrieve(channel: grpc.Channel) -> rs.RetrieveResponse:
    request = rs.RetrieveRequest(query="How is espresso brewed?", top_k=2)
    response: rs.RetrieveResponse = rs_grpc.RetrievalServiceStub(channel).Retrieve(
        request, timeout=60
    )
    return response


def test_another_model_is_refused_and_the_own_model_still_serves(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = _serve(data)
    try:
        with grpc.insecure_channel(server.target) as channel:
            ix_grpc.IndexServiceStub(channel).CreateCollection(
                ix.CreateCollectionRequest(name="default"), timeout=30
            )
            _upsert(channel, "coffee.md", "# Coffee\n\nEspresso is brewed at nine bars.")
            _upsert(channel, "tea.md", "# Tea\n\nGreen tea is steeped at 80 degrees.")
            assert _retrieve(channel).hits[0].chunk.document_id == "coffee.md"
    finally:
        server.stop()

    other = _serve(data, str(_other_model(tmp_path / "other-model")))
    try:
        with grpc.insecure_channel(other.target) as channel:
            with pytest.raises(grpc.RpcError) as retrieve:
                _retrieve(channel)
            assert retrieve.value.code() is grpc.StatusCode.FAILED_PRECONDITION
            details = retrieve.value.details()
            assert "collection 'default' was indexed with another embedding model" in details
            assert "model.embedding_model_path" in details
            with pytest.raises(grpc.RpcError) as upsert:
                _upsert(channel, "cocoa.md", "# Cocoa\n\nCocoa is made with milk.")
            assert upsert.value.code() is grpc.StatusCode.FAILED_PRECONDITION
            with pytest.raises(grpc.RpcError) as memories:
                ix_grpc.IndexServiceStub(channel).AddMemories(
                    ix.AddMemoriesRequest(memories=[ix.Memory(text="The user drinks tea.")]),
                    timeout=60,
                )
            assert memories.value.code() is grpc.StatusCode.FAILED_PRECONDITION
            with pytest.raises(grpc.RpcError) as answer:
                request = rs.AnswerRequest(retrieve=rs.RetrieveRequest(query="espresso?"))
                list(rs_grpc.RetrievalServiceStub(channel).Answer(request, timeout=60))
            assert answer.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    finally:
        other.stop()

    again = _serve(data)
    try:
        with grpc.insecure_channel(again.target) as channel:
            response = _retrieve(channel)
            assert [h.chunk.document_id for h in response.hits] == ["coffee.md", "tea.md"]
    finally:
        again.stop()
