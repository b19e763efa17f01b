"""Ingestion throughput on this machine: documents/s and chunks/s per format and per stage.

Run from the repository root:
    python -m benchmarks.ingest.throughput [--sections 80] [--seed 7] [--runtime torch]

The same python-faq pages (about --sections sections of Python's documentation, up to 4 per page;
$PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout) are rendered as Markdown, plain
text, HTML and PDF (benchmarks/ingest/pages.py) and ingested twice, in batches of BATCH documents,
the two paths back to back for each format (alternating which goes first):
1. in-process through the core `Indexer` into a fresh collection, with each stage timed
   (parse+chunk, embed, store commit, index update; see stage_clock.py);
2. through the real gRPC path: one UpsertDocuments stream per format to a `groundwire serve`
   process (fresh data directory, same model, CPU), timed at the client.
Both paths warm up the model first. `--runtime` (torch, onnx, onnx-int8) picks the embedding
runtime of both paths (model.runtime; the ONNX files are built once under --onnx-cache, which the
server shares through model.onnx_cache_dir). The embed stage's chunks/s is the raw model rate on the same
chunks, beside the end-to-end rate. Prints tables and writes
benchmarks/results/ingest_throughput.{json,md} (ingest_throughput-<runtime>.* for ONNX runtimes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc

from benchmarks.ghz.faq_index import DEFAULT_DATASET
from benchmarks.ingest.pages import load_pages, render_all
from benchmarks.ingest.stage_clock import STAGES, StageClock, TimedEmbedder
from core.catalog.collection import Collection
from core.catalog.collection_config import CollectionConfig
from core.embed.embedder_factory import build_embedder
from core.embed.model_runtime import ModelRuntime
from core.embed.protocol import Embedder
from core.embed.sentence_transformer_embedder import default_model_path
from core.indexer import Indexer, Outcome
from core.models import Document, SourceType
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from tests.serve_subprocess import ServeSubprocess

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
FORMATS = ("markdown", "text", "html", "pdf")
BATCH = 16
CHUNK_MAX_TOKENS = 200  # the server default (indexing.chunk_max_tokens)
MAX_DOCUMENT_BYTES = 10 * 1024 * 1024
_PROTO_TYPE = {
    "markdown": common.SOURCE_TYPE_MARKDOWN,
    "text": common.SOURCE_TYPE_TEXT,
    "html": common.SOURCE_TYPE_HTML,
    "pdf": common.SOURCE_TYPE_PDF,
}

Inputs = dict[str, list[tuple[str, str | bytes]]]


@dataclass
class Run:
    """One format through one path."""

    documents: int = 0
    chunks: int = 0
    failed: int = 0
    input_bytes: int = 0
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)

    @property
    def documents_per_s(self) -> float:
        """Documents indexed per second of wall time."""
        return self.documents / self.seconds if self.seconds else 0.0

    @property
    def chunks_per_s(self) -> float:
        """Chunks written per second of wall time."""
        return self.chunks / self.seconds if self.seconds else 0.0


def _batches(
    items: Sequence[tuple[str, str | bytes]],
) -> Iterator[Sequence[tuple[str, str | bytes]]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]


def _document(kind: str, document_id: str, content: str | bytes) -> Document:
    source_type = SourceType(kind)
    if isinstance(content, bytes):
        return Document(document_id, "", source_type, document_id, content=content)
    return Document(document_id, content, source_type, document_id)


def run_both(
    inputs: Inputs, work_dir: Path, runtime: ModelRuntime, onnx_cache: Path
) -> tuple[dict[str, Run], dict[str, Run], float]:
    """Every format in-process and over gRPC, back to back (order alternating per format, so
    load from other processes on shared cores hits both paths alike).

    Returns (in-process runs, gRPC runs, server start-up seconds).
    """
    embedder = build_embedder(default_model_path(), runtime, onnx_cache=onnx_cache)
    print(f"model.runtime {runtime.value}: {type(embedder).__name__}", flush=True)
    embedder.embed_documents(["warm-up: load the weights and the tokenizer"] * 8)
    server = ServeSubprocess.start(
        work_dir / "grpc-data",
        work_dir / "serve.log",
        env={  # the server reuses the ONNX files built above instead of building its own
            "GROUNDWIRE_MODEL__RUNTIME": runtime.value,
            "GROUNDWIRE_MODEL__ONNX_CACHE_DIR": str(onnx_cache),
        },
    )
    local: dict[str, Run] = {}
    remote: dict[str, Run] = {}
    try:
        with grpc.insecure_channel(server.target, options=_CHANNEL_OPTIONS) as channel:
            stub = ix_grpc.IndexServiceStub(channel)
            _upsert(stub, "warm-up", "markdown", [("warm.md", "# Warm-up\n\nLoad the model.\n")])
            for position, (kind, items) in enumerate(inputs.items()):
                for path in ("in-process", "gRPC")[:: 1 if position % 2 == 0 else -1]:
                    if path == "in-process":
                        run = local[kind] = in_process(embedder, kind, items, work_dir)
                    else:
                        run = remote[kind] = over_grpc(stub, kind, items)
                    print(
                        f"{path} {kind}: {run.documents} documents, {run.chunks} chunks in "
                        f"{run.seconds:.1f}s",
                        flush=True,
                    )
    finally:
        server.stop()
    return local, remote, server.startup_s


def in_process(
    embedder: Embedder, kind: str, items: Sequence[tuple[str, str | bytes]], work_dir: Path
) -> Run:
    """One format through the core Indexer into a fresh collection, stages timed."""
    clock = StageClock()
    indexer = Indexer(TimedEmbedder(embedder, clock), CHUNK_MAX_TOKENS, MAX_DOCUMENT_BYTES)
    config = CollectionConfig(
        chunk_max_tokens=CHUNK_MAX_TOKENS,
        embedding_model=embedder.model_name,
        embedding_dim=embedder.dimension,
    )
    collection = Collection.open(kind, work_dir / "in-process" / kind, config)
    run = Run(input_bytes=sum(len(_bytes(c)) for _, c in items))
    started = time.perf_counter()
    with clock.instrument(collection):
        for batch in _batches(items):
            outcomes = indexer.index(collection, [_document(kind, i, c) for i, c in batch])
            _count(run, [(o.outcome is Outcome.UPSERTED, o.chunk_count) for o in outcomes])
        collection.checkpoint()  # as the server does per call
    run.seconds = time.perf_counter() - started
    run.stages = {stage: clock.seconds[stage] for stage in STAGES}
    run.stages["other"] = max(0.0, run.seconds - sum(run.stages.values()))
    collection.close()
    return run


def over_grpc(
    stub: ix_grpc.IndexServiceStub, kind: str, items: Sequence[tuple[str, str | bytes]]
) -> Run:
    """One format as one UpsertDocuments stream into a new collection, timed at the client."""
    run = Run(input_bytes=sum(len(_bytes(c)) for _, c in items))
    started = time.perf_counter()
    response = _upsert(stub, f"grpc-{kind}", kind, items)
    run.seconds = time.perf_counter() - started
    outcomes = [
        (r.outcome == ix.DOCUMENT_OUTCOME_UPSERTED, r.chunk_count) for r in response.results
    ]
    _count(run, outcomes)
    return run


_CHANNEL_OPTIONS = [("grpc.max_send_message_length", 64 * 1024 * 1024)]


def _upsert(
    stub: ix_grpc.IndexServiceStub,
    collection: str,
    kind: str,
    items: Sequence[tuple[str, str | bytes]],
) -> ix.UpsertDocumentsResponse:
    stub.CreateCollection(ix.CreateCollectionRequest(name=collection), timeout=30)

    def requests() -> Iterator[ix.UpsertDocumentsRequest]:
        for batch in _batches(items):
            documents = []
            for document_id, content in batch:
                doc = common.Document(document_id=document_id, source_type=_PROTO_TYPE[kind])
                if isinstance(content, bytes):
                    doc.content = content
                else:
                    doc.text = content
                documents.append(doc)
            yield ix.UpsertDocumentsRequest(collection=collection, documents=documents)

    response: ix.UpsertDocumentsResponse = stub.UpsertDocuments(requests(), timeout=3600)
    return response


def _count(run: Run, results: Sequence[tuple[bool, int]]) -> None:
    for upserted, chunks in results:
        if upserted:
            run.documents += 1
            run.chunks += chunks
        else:
            run.failed += 1


def _bytes(content: str | bytes) -> bytes:
    return content if isinstance(content, bytes) else content.encode("utf-8")


def _total(runs: dict[str, Run]) -> Run:
    total = Run()
    for run in runs.values():
        total.documents += run.documents
        total.chunks += run.chunks
        total.failed += run.failed
        total.input_bytes += run.input_bytes
        total.seconds += run.seconds
        for stage, seconds in run.stages.items():
            total.stages[stage] = total.stages.get(stage, 0.0) + seconds
    return total


def tables(local: dict[str, Run], remote: dict[str, Run]) -> tuple[str, str]:
    """(throughput table, in-process stage table) in Markdown."""
    local_all = {**local, "all formats": _total(local)}
    remote_all = {**remote, "all formats": _total(remote)}
    throughput = [
        "| format | documents | chunks | input MB | in-process docs/s | in-process chunks/s "
        "| gRPC docs/s | gRPC chunks/s | failed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, run in local_all.items():
        other = remote_all[kind]
        throughput.append(
            f"| {kind} | {run.documents} | {run.chunks} | {run.input_bytes / 1e6:.2f} "
            f"| {run.documents_per_s:.2f} | {run.chunks_per_s:.1f} | {other.documents_per_s:.2f} "
            f"| {other.chunks_per_s:.1f} | {run.failed} / {other.failed} |"
        )
    stages = [
        "| format | " + " | ".join(f"{s} s (chunks/s)" for s in STAGES) + " | other s | total s |",
        "|---|" + "---|" * (len(STAGES) + 2),
    ]
    for kind, run in local_all.items():
        cells = [_stage_cell(run, stage) for stage in STAGES]
        stages.append(
            f"| {kind} | "
            + " | ".join(cells)
            + f" | {run.stages['other']:.1f} | {run.seconds:.1f} |"
        )
    return "\n".join(throughput), "\n".join(stages)


def _stage_cell(run: Run, stage: str) -> str:
    seconds = run.stages[stage]
    return f"{seconds:.1f} ({run.chunks / seconds:.0f})" if seconds > 0 else "0.0"


def write(report: dict[str, Any], local: dict[str, Run], remote: dict[str, Run]) -> None:
    """Print the tables and write benchmarks/results/ingest_throughput.{json,md}."""
    throughput, stages = tables(local, remote)
    print(throughput + "\n\n" + stages)
    RESULTS.mkdir(parents=True, exist_ok=True)
    report = {
        **report,
        "in_process": {k: asdict(v) for k, v in local.items()},
        "grpc": {k: asdict(v) for k, v in remote.items()},
    }
    name = "ingest_throughput" + ("" if report["runtime"] == "torch" else f"-{report['runtime']}")
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / f"{name}.md").write_text(
        f"# Ingestion throughput ({report['date']}, {report['cpus']} CPU cores, no GPU, "
        f"model.runtime {report['runtime']})\n\n"
        f"{report['pages']} python-faq pages ({report['sections']} sections of the Python 3.11 "
        "docs, seed "
        f"{report['seed']}) rendered as each format; all-MiniLM-L6-v2 on CPU, chunks of at most "
        f"{CHUNK_MAX_TOKENS} tokens, batches of {BATCH} documents. In-process: the core Indexer "
        "with each stage timed; gRPC: one UpsertDocuments stream per format to `groundwire serve` "
        f"(started in {report['server_start_s']:.1f}s), timed at the client. Failed: in-process / "
        "gRPC. Times are wall-clock on shared cores (1-minute load average "
        f"{report['load_average_1m'][0]} at the start, {report['load_average_1m'][1]} at the end; "
        f"{report['wall_s']:.0f}s in all).\n\n"
        f"{throughput}\n\nIn-process time per stage (chunks/s of that stage alone):\n\n{stages}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sections", type=int, default=80)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--runtime",
        type=ModelRuntime,
        default=ModelRuntime.TORCH,
        choices=list(ModelRuntime),
        metavar="{" + ",".join(r.value for r in ModelRuntime) + "}",
    )
    parser.add_argument(
        "--onnx-cache", type=Path, default=Path(tempfile.gettempdir()) / "groundwire-onnx-models"
    )
    args = parser.parse_args()
    pages = load_pages(DEFAULT_DATASET / "corpus.jsonl", args.sections, args.seed)
    inputs: Inputs = {kind: render_all(pages, kind) for kind in FORMATS}
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="gw-ingest-") as tmp:
        local, remote, server_start_s = run_both(inputs, Path(tmp), args.runtime, args.onnx_cache)
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "seed": args.seed,
        "runtime": args.runtime.value,
        "pages": len(pages),
        "sections": sum(len(p.sections) for p in pages),
        "batch": BATCH,
        "chunk_max_tokens": CHUNK_MAX_TOKENS,
        "server_start_s": round(server_start_s, 2),
        "wall_s": round(time.perf_counter() - started, 1),
        "load_average_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    write(report, local, remote)


if __name__ == "__main__":
    main()
