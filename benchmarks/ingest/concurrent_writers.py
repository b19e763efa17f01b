"""Concurrent upserts: chunks/s with 1 writer against 4 writers through a real server.

Run from the repository root:
    python -m benchmarks.ingest.concurrent_writers [--sections 160] [--rounds 2] [--label NAME]

The python-faq pages ($PYTHON_FAQ_DIR, else shared/data/python-faq beside the checkout; about
--sections sections, up to 4 per page, rendered as Markdown; see pages.py) are upserted into a fresh
collection of one `groundwire serve` process (CPU) by W concurrent gRPC clients, each streaming its
own share of the pages in messages of BATCH documents. W = 1 and W = 4 alternate for --rounds rounds
(a new collection each time) after a warm-up upsert. chunks/s = chunks the server reports written /
wall time from the first send to the last reply. Prints a table and writes
benchmarks/results/concurrent_writers[-LABEL].{json,md} (a label keeps runs of another code version,
e.g. the baseline, beside this one).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc

from benchmarks.ghz.faq_index import DEFAULT_DATASET
from benchmarks.ingest.pages import load_pages, render_all
from groundwire.v1 import common_pb2 as common
from groundwire.v1 import index_service_pb2 as ix
from groundwire.v1 import index_service_pb2_grpc as ix_grpc
from tests.serve_subprocess import ServeSubprocess

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
BATCH = 4
WRITERS = (1, 4)


def _documents(sections: int, seed: int) -> list[common.Document]:
    pages = load_pages(DEFAULT_DATASET / "corpus.jsonl", sections, seed)
    return [
        common.Document(
            document_id=f"{name}.md",
            text=str(text),
            source_type=common.SOURCE_TYPE_MARKDOWN,
            source_path=f"{name}.md",
        )
        for name, text in render_all(pages, "markdown")
    ]


def _stream(target: str, collection: str, documents: Sequence[common.Document]) -> int:
    """One client: upsert `documents` in messages of BATCH; the chunks written."""
    with grpc.insecure_channel(target) as channel:
        stub = ix_grpc.IndexServiceStub(channel)
        messages = [
            ix.UpsertDocumentsRequest(collection=collection, documents=documents[i : i + BATCH])
            for i in range(0, len(documents), BATCH)
        ]
        response = stub.UpsertDocuments(iter(messages), timeout=3600)
        if response.failed:
            raise RuntimeError(f"{response.failed} documents failed")
        return int(response.chunks_written)


def run_once(
    target: str, collection: str, documents: Sequence[common.Document], writers: int
) -> dict[str, float]:
    """Upsert `documents` split across `writers` concurrent clients into a new collection."""
    with grpc.insecure_channel(target) as channel:
        ix_grpc.IndexServiceStub(channel).CreateCollection(
            ix.CreateCollectionRequest(name=collection), timeout=60
        )
    shares = [list(documents[w::writers]) for w in range(writers)]
    written = [0] * writers
    errors: list[BaseException] = []

    def client(w: int) -> None:
        try:
            written[w] = _stream(target, collection, shares[w])
        except BaseException as exc:  # reported after the join
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(w,)) for w in range(writers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    if errors:
        raise errors[0]
    chunks = sum(written)
    return {
        "writers": writers,
        "chunks": chunks,
        "seconds": seconds,
        "chunks_per_s": chunks / seconds,
    }


def run(sections: int, seed: int, rounds: int, work_dir: Path) -> dict[str, Any]:
    """Start the server, warm it up, alternate the writer counts; the report."""
    documents = _documents(sections, seed)
    server = ServeSubprocess.start(work_dir / "data", work_dir / "serve.log")
    runs: list[dict[str, float]] = []
    try:
        run_once(server.target, "warmup", documents[:BATCH], 1)
        for round_no in range(rounds):
            order = WRITERS if round_no % 2 == 0 else tuple(reversed(WRITERS))
            for writers in order:
                result = run_once(server.target, f"w{writers}r{round_no}", documents, writers)
                runs.append(result)
                print(
                    f"round {round_no + 1}: {writers} writer(s): {result['chunks']} chunks in "
                    f"{result['seconds']:.1f} s = {result['chunks_per_s']:.1f} chunks/s",
                    flush=True,
                )
    finally:
        server.stop()
    summary = {}
    for writers in WRITERS:
        rates = [r["chunks_per_s"] for r in runs if r["writers"] == writers]
        summary[str(writers)] = {"median_chunks_per_s": statistics.median(rates), "runs": rates}
    return {"documents": len(documents), "runs": runs, "summary": summary}


def table(report: dict[str, Any]) -> str:
    """Markdown table: writers, median chunks/s, each run, speed-up over one writer."""
    one = report["summary"]["1"]["median_chunks_per_s"]
    lines = ["| writers | chunks/s (median) | runs | vs 1 writer |", "|---|---|---|---|"]
    for writers, entry in report["summary"].items():
        runs = ", ".join(f"{rate:.1f}" for rate in entry["runs"])
        median = entry["median_chunks_per_s"]
        lines.append(f"| {writers} | {median:.1f} | {runs} | {median / one:.2f}x |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sections", type=int, default=160)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--label", default="", help="suffix of the result files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gw-writers-") as work:
        report = run(args.sections, args.seed, args.rounds, Path(work))
    report.update(
        date=datetime.now(UTC).isoformat(timespec="seconds"),
        machine=platform.machine(),
        cpus=os.cpu_count(),
        load_avg_1m=round(os.getloadavg()[0], 1),
        sections=args.sections,
        seed=args.seed,
        label=args.label,
    )
    rendered = table(report)
    print(rendered)
    suffix = f"-{args.label}" if args.label else ""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"concurrent_writers{suffix}.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / f"concurrent_writers{suffix}.md").write_text(
        f"# Concurrent writers{f' ({args.label})' if args.label else ''} "
        f"({report['date']}, {report['cpus']} CPU cores, load {report['load_avg_1m']}, "
        f"{report['machine']})\n\n"
        f"{report['documents']} python-faq pages as Markdown (about {args.sections} sections), "
        f"upserted by W concurrent clients into a fresh collection of `groundwire serve` (CPU), "
        f"{BATCH} documents per message; W alternates over {args.rounds} rounds.\n\n"
        + rendered
        + "\n"
    )


if __name__ == "__main__":
    main()
