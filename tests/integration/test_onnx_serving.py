"""`groundwire serve` with the default model.runtime (auto): queries by the per-token int8 export,
passages by the fp32 export in a session of their own (the demo corpus indexed by it at
start-up). The export lives in the host's cache (model.onnx_cache_dir), outside every data
directory: a server on a second, fresh data directory reuses it instead of building its own."""

from __future__ import annotations

from pathlib import Path

from groundwire import Client
from tests.serve_subprocess import ServeSubprocess

ENV = {"GROUNDWIRE_STORAGE__SEED_DEMO_CORPUS": "true"}
PARAPHRASE = "Is there a way to duplicate an object, shallow or deep?"
ANSWER = "How do I copy an object in Python?"


def _dense_sections(target: str) -> list[str]:
    with Client(target) as client:
        response = client.retrieve(PARAPHRASE, mode="dense", top_k=5, timeout=120)
    return [hit.chunk.section_path[-1] for hit in response.hits]


def test_the_default_server_queries_with_int8_and_shares_one_build_across_data_dirs(
    tmp_path: Path,
) -> None:
    logs = []
    for name in ("first", "second"):
        data = tmp_path / name
        server = ServeSubprocess.start(data, tmp_path / f"{name}.log", env=ENV, timeout_s=900)
        try:
            assert ANSWER in _dense_sections(server.target)
        finally:
            server.stop()
        logs.append(server.log_text())
        assert not (data / "models").exists()
    for log in logs:
        assert "model.runtime auto: queries by onnx-int8 (" in log
        assert "passages by onnx in a session of" in log
    assert "embedding runtime onnx-int8: reusing" in logs[1]
    assert "embedding runtime onnx: reusing" in logs[1]
    assert "embedding runtime onnx: building" not in logs[1]
    assert "embedding runtime onnx-int8: building" not in logs[1]
