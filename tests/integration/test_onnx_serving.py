"""`groundwire serve` with model.runtime = onnx-int8: the first start builds and verifies the
export in its data directory and indexes the demo corpus with it; a restart reuses the files."""

from __future__ import annotations

from pathlib import Path

from groundwire import Client
from tests.serve_subprocess import ServeSubprocess

ENV = {"GROUNDWIRE_MODEL__RUNTIME": "onnx-int8", "GROUNDWIRE_STORAGE__SEED_DEMO_CORPUS": "true"}
PARAPHRASE = "Is there a way to duplicate an object, shallow or deep?"
ANSWER = "How do I copy an object in Python?"


def _dense_sections(target: str) -> list[str]:
    with Client(target) as client:
        response = client.retrieve(PARAPHRASE, mode="dense", top_k=5, timeout=120)
    return [hit.chunk.section_path[-1] for hit in response.hits]


def test_an_onnx_int8_server_builds_once_serves_and_reuses_its_export(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = ServeSubprocess.start(data, tmp_path / "first.log", env=ENV, timeout_s=900)
    try:
        assert ANSWER in _dense_sections(first.target)
    finally:
        first.stop()
    log = first.log_text()
    assert "embedding runtime onnx-int8 verified against torch" in log
    built = sorted(p.name for p in next((data / "models").iterdir()).iterdir())
    assert {"manifest.json", "model.int8.onnx", "model.onnx", "tokenizer"} <= set(built)
    second = ServeSubprocess.start(data, tmp_path / "second.log", env=ENV, timeout_s=600)
    try:
        assert ANSWER in _dense_sections(second.target)
    finally:
        second.stop()
    assert "embedding runtime onnx-int8: reusing" in second.log_text()
    assert "onnx-int8: building" not in second.log_text()
