"""benchmarks/peers/peers_table: the report's rows and its cores-busy lines for both drivers."""

from __future__ import annotations

from typing import Any

from benchmarks.peers.peers_table import markdown


def _load(threads: int, qps: float, **extra: Any) -> dict[str, Any]:
    load = {"threads": threads, "calls": 100, "qps": qps, "p50_ms": 10.0, "p99_ms": 20.0}
    return {**load, "errors": 0, **extra}


def _record() -> dict[str, Any]:
    ingest = {
        "docs_per_s_with_embedding": 3.0,
        "probe_documents": 2,
        "chunks": 4,
        "chunks_per_s": 8.0,
    }
    quality = {"recall@10": 0.85, "mrr@10": 0.68, "docs_returned_mean": 10.0, "ingest": ingest}
    return {
        "label": "t",
        "machine": {
            "date": "d",
            "commit": "c",
            "cores": 2,
            "cpu": "x",
            "python": "3.11",
            "packages": {"grpcio": "1"},
        },
        "documents": 5,
        "groundwire_index": {"chunks": 9},
        "duration_s_per_thread_count": 1,
        "uptime_before": "b",
        "uptime_after": "a",
        "peer_embedding": {"embed_docs_per_s": 1.0, "embed_s": 5.0},
        "peer_versions": {"chromadb": "1"},
        "systems": [
            {
                "system": "groundwire-default",
                **quality,
                "load": [_load(8, 90.0, server_cores_busy=1.7, driver_cores_busy=0.3)],
            },
            {
                "system": "groundwire-default (ghz)",
                **quality,
                "load": [_load(8, 140.0, server_cores_busy=1.9, driver_cores_busy=0.1)],
            },
            {
                "system": "chroma-embedded",
                "recall@10": 0.86,
                "mrr@10": 0.63,
                "docs_returned_mean": 10.0,
                "ingest": {"docs_per_s_with_embedding": 20.0},
                "load": [_load(8, 45.0, driver_cores_busy=1.1)],
            },
        ],
    }


def test_both_drivers_rows_and_who_kept_the_cores_busy() -> None:
    text = markdown(_record())
    assert "| groundwire-default (ghz) | 140.0 | 10.0 / 20.0 | 0 | 0.85 | 0.68 |" in text
    assert "groundwire-default 1.7 + 0.3; groundwire-default (ghz) 1.9 + 0.1." in text
    assert (
        "(embedded: the whole system; chroma-http: its client only): chroma-embedded 1.1." in text
    )
    assert "Shared machine" not in text


def _with_passage_probe(**raw_export: Any) -> dict[str, Any]:
    record = _record()
    rate = {"chunks": 4, "seconds": 1.0, "chunks_per_s": 4.0}
    ingest = {
        **record["systems"][0]["ingest"],
        "raw_encode": rate,
        "end_to_end_share_of_raw": 0.9,
        "section_texts": 1,
        "raw_encode_with_sections": {**rate, "seconds": 1.2},
        "end_to_end_share_of_raw_with_sections": 0.95,
        "raw_export": {**rate, **raw_export},
        "end_to_end_share_of_export": 0.8,
        "raw_export_with_sections": {**rate, "seconds": 1.1},
        "end_to_end_share_of_export_with_sections": 0.9,
    }
    for system in record["systems"][:2]:
        system["ingest"] = ingest
    return record


def test_the_passage_probe_names_the_file_it_ran_when_recorded() -> None:
    fused = markdown(_with_passage_probe(runtime="onnx", file="model.fused.onnx"))
    assert "(the fp32 ONNX export, onnxruntime (model.fused.onnx), batch 32)" in fused
    older = markdown(_with_passage_probe())  # written before the runtime or file was recorded
    assert "(the fp32 ONNX export, onnxruntime, batch 32)" in older
