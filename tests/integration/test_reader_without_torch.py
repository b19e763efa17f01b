"""A reader process on a CPU host serves queries without loading torch (`serve --processes 2`).

A real server binary with the default model settings (`model.device = "auto"`, which is the CPU
here, and `model.runtime = "auto"`): both embed with onnxruntime, and `model.device = "auto"` makes the
primary import torch to look for CUDA; the reader, given the primary's choice, never does. After both, served through a connection that reaches the reader
(tests/serving_process.py), the reader's memory map (/proc/<pid>/maps) holds no torch shared
object, while the primary's does: the same check sees torch where it is loaded. Python-only
packages leave no trace in the map, so a fresh interpreter also builds a reader's runtime on the
same data directory, retrieves, and reports which of torch, transformers and
sentence-transformers it imported: none.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.serve_subprocess import ServeSubprocess
from tests.serving_process import serving_process

COLLECTION = "topics"
MAX_CHANNELS = 32
TORCH_OBJECT = re.compile(r"/torch/(?:_C\.|lib/libtorch)\S*\.so")
DOCUMENTS = {
    "tides": "Tides rise and fall twice a day because the Moon's gravity pulls on the oceans.",
    "sourdough": "Sourdough bread rises with a starter of wild yeast and lactic acid bacteria.",
    "glaciers": "Glaciers carve U-shaped valleys as the ice grinds over the bedrock beneath it.",
}
QUESTIONS = {
    "why does the sea level change during the day": "tides",
    "how is bread leavened without commercial yeast": "sourdough",
    "what shapes a valley into a U": "glaciers",
}


FOLLOWER = """
import dataclasses, json, sys
from server.runtime import Runtime
from server.settings import load_settings
from core.retrieve.request import RetrievalRequest
settings = load_settings()
settings = settings.replace(model=dataclasses.replace(settings.model, device="cpu"))
runtime = Runtime(settings, follower=True)  # a reader's, given the primary's device
runtime.load()
result = runtime.pipeline.retrieve(RetrievalRequest(query=sys.argv[1], collection=sys.argv[2]))
runtime.close()
heavy = ("torch", "transformers", "sentence_transformers")
print(json.dumps({"top": result.hits[0].chunk.document_id,
                  "imported": [name for name in heavy if name in sys.modules]}))
"""


def torch_objects(pid: int) -> set[str]:
    """The torch shared objects mapped into process `pid`."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {match.group(0) for match in TORCH_OBJECT.finditer(maps)}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reader-without-torch") / "data"


@pytest.fixture(scope="module")
def server(data_dir: Path) -> Iterator[ServeSubprocess]:
    directory = data_dir.parent
    served = ServeSubprocess.start(
        data_dir,
        directory / "server.log",
        env={"GROUNDWIRE_SERVER__PROCESSES": "2", "GROUNDWIRE_MODEL__DEVICE": "auto"},
    )
    try:
        with grpc.insecure_channel(served.target) as channel:
            index = ix_grpc.IndexServiceStub(channel)
            index.CreateCollection(ix.CreateCollectionRequest(name=COLLECTION))
            documents = [
                common.Document(document_id=name, text=text, source_path=f"{name}.txt")
                for name, text in DOCUMENTS.items()
            ]
            request = ix.UpsertDocumentsRequest(collection=COLLECTION, documents=documents)
            assert index.UpsertDocuments(iter([request])).upserted == len(DOCUMENTS)
        yield served
    finally:
        served.stop()


@pytest.fixture
def reader_channel(server: ServeSubprocess) -> Iterator[grpc.Channel]:
    """A channel (its own connection) that a reader process serves."""
    opened: list[grpc.Channel] = []
    try:
        for number in range(MAX_CHANNELS):
            # a local subchannel pool: every channel opens its own TCP connection
            channel = grpc.insecure_channel(
                server.target, options=[("grpc.use_local_subchannel_pool", 1)]
            )
            opened.append(channel)
            if serving_process(channel, COLLECTION, f"which process am I {number}") > 0:
                yield channel
                return
        pytest.fail(f"none of {MAX_CHANNELS} connections reached the reader")
    finally:
        for channel in opened:
            channel.close()


def test_the_reader_serves_retrieve_and_answer_without_loading_torch(
    server: ServeSubprocess, reader_channel: grpc.Channel
) -> None:
    retrieval = rs_grpc.RetrievalServiceStub(reader_channel)
    for question, expected in QUESTIONS.items():
        for mode in (rs.RETRIEVAL_MODE_DENSE, rs.RETRIEVAL_MODE_HYBRID):
            request = rs.RetrieveRequest(
                query=question, collection=COLLECTION, top_k=3, hybrid=rs.HybridParams(mode=mode)
            )
            reply = retrieval.Retrieve(request)
            assert reply.hits[0].chunk.document_id == expected, (question, mode, reply)
    answer = list(
        retrieval.Answer(
            rs.AnswerRequest(
                retrieve=rs.RetrieveRequest(query=next(iter(QUESTIONS)), collection=COLLECTION)
            )
        )
    )
    assert answer, "the Answer stream was empty"
    cleared = retrieval.ClearCache(rs.ClearCacheRequest(collection=COLLECTION))
    pids = {process.process: process.pid for process in cleared.processes}
    assert set(pids) == {0, 1} and pids[0] == server.process.pid, cleared
    assert torch_objects(pids[1]) == set(), f"reader {pids[1]} loaded torch"
    assert any("libtorch_cpu" in path for path in torch_objects(pids[0])), "primary: no torch?"


def test_a_readers_runtime_imports_neither_torch_nor_transformers(
    server: ServeSubprocess, data_dir: Path
) -> None:
    question, expected = next(iter(QUESTIONS.items()))
    env = {**os.environ, "GROUNDWIRE_STORAGE__DATA_DIR": str(data_dir)}
    env.pop("GROUNDWIRE_CONFIG", None)
    finished = subprocess.run(
        [sys.executable, "-c", FOLLOWER, question, COLLECTION],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    report = json.loads(finished.stdout.strip().splitlines()[-1])
    assert report == {"top": expected, "imported": []}, finished.stderr
