"""Retrieve's per-request work beside the model (#16): each lever before/after, interleaved.

Run from the repository root (PYTHONPATH=$PWD:$PWD/clients/python in a worktree):

    python -m benchmarks.retrieve.hot_path --baseline DIR [--data-dir D] [--duration S]
        [--rounds N] [--concurrency 1 8 32] [--modes hybrid dense] [--no-servers]

`--baseline DIR`: a checkout of the code before the levers (`git archive <commit> | tar -x -C
DIR`); its server runs beside this tree's. `--data-dir`: a data directory holding the python-faq
collection (default: the ghz quick index, `benchmarks/ghz/faq_index.py --quick`, built once).

1. **FAISS at the full python-faq size** (in process): 19,551 x 384 vectors (the collection's
   real chunk vectors repeated with 1 % noise, renormalised), the 172 python-faq questions
   embedded as queries, top 50 (the default depth) through `FaissIndex.search`. *before*: the
   default OpenMP team of every core on each calling thread; *after*: a single query searches
   on its calling thread alone (`core/dense/faiss_threads.py`). Serial, and from 8 threads at
   once (the server's workers); the rankings of both compared.
2. **Store reads** (in process, the collection's store): each question's 50 dense candidates,
   questions in turn: section vectors *before* read from SQLite on every call (the old code),
   *after* through the store's LRU (outputs compared); chunks through the chunk LRU at the old
   size (4,096) and the new one.
3. **End to end**: `groundwire serve` of the baseline and of this tree up at once on copies of the
   same data directory (caches off), Retrieve driven by one grpc.aio client process per run,
   interleaved (variant after variant, `--rounds` times per setting): queries/s, p50/p99, server
   cores busy and CPU ms per query; then every question through both servers, hits compared.

Every section records `uptime` before and after. Writes results/retrieve_hot_path.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import numpy as np

from benchmarks.ghz import faq_index
from benchmarks.ghz.machine import uptime
from benchmarks.gpu import grpc_load
from benchmarks.retrieve.concurrency import cpu_seconds, queries
from core.models import ChunkDraft, Document
from groundwire.v1 import retrieval_service_pb2 as rs
from groundwire.v1 import retrieval_service_pb2_grpc as rs_grpc
from tests.serve_subprocess import ServeSubprocess

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
FULL_CHUNKS = 19_551  # python-faq's whole corpus
DEPTH = 50  # RetrievalRequest.depth at top_k 10
THREADS = 8  # server.worker_threads
SERVER_ENV = {"GROUNDWIRE_CACHE__ENABLED": "false"}


def padded(data_dir: Path, chunks: int, cache: Path) -> Path:
    """A copy of `data_dir` whose collection is padded to about `chunks` chunks (built once under
    `cache`): each document copied as "<id>~pad<n>" with its chunk and section vectors plus 1 %
    noise (renormalised), written through `Collection.commit` (no model), so FAISS, Tantivy and the
    store hold a full-corpus-sized collection whose real documents still answer the questions."""
    from core.catalog.catalog import CollectionCatalog
    from core.store.records import PreparedDocument, SectionVectors

    target = cache / f"{data_dir.name}-padded-{chunks}"
    if (target / "PADDED").exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(data_dir, target)
    catalog = CollectionCatalog(target)
    catalog.open_all()
    tenant = next(p.name for p in (target / "tenants").iterdir())
    collection = catalog.get(tenant, faq_index.COLLECTION)
    store = collection.store
    ids, vectors = live_vectors(store)
    by_row = dict(zip(ids.tolist(), vectors, strict=True))
    documents = sorted({c.document_id for c in store.get_chunks(ids.tolist()).values()})
    rng = np.random.default_rng(16)
    copy, have = 0, len(ids)
    while have < chunks:
        copy += 1
        batch: list[PreparedDocument] = []
        for document_id in documents:
            stored = store.get_document(document_id)
            if stored is None or not stored.chunks or have >= chunks:
                continue
            rows = [c.row_id for c in stored.chunks]
            found, section_matrix = store.get_section_vectors(rows)
            section_of = dict(zip(found.tolist(), section_matrix, strict=True))
            paths = tuple(dict.fromkeys(c.section_path for c in stored.chunks))
            first = {c.section_path: c.row_id for c in reversed(stored.chunks)}
            new_id = f"{document_id}~pad{copy}"
            document = Document(
                new_id, stored.text, stored.source_type, stored.source_path, stored.title,
                dict(stored.metadata),
            )  # fmt: skip
            sections = SectionVectors()
            if all(first[path] in section_of for path in paths):
                sections = SectionVectors(
                    paths, noisy(np.stack([section_of[first[p]] for p in paths]), rng)
                )
            batch.append(
                PreparedDocument(
                    document=document,
                    content_hash=document.content_hash(),
                    chunks=tuple(
                        ChunkDraft(c.text, c.section_path, c.has_code, c.token_estimate, c.page)
                        for c in stored.chunks
                    ),
                    embeddings=noisy(np.stack([by_row[r] for r in rows]), rng),
                    risks=tuple((c.risk_flags, c.risk_level) for c in stored.chunks),
                    sections=sections,
                )
            )
            have += len(rows)
            if len(batch) == 64:
                collection.commit(batch)
                batch = []
        if batch:
            collection.commit(batch)
        print(f"padded to {have} chunks", flush=True)
    collection.checkpoint()
    catalog.close()
    (target / "PADDED").write_text(str(have))
    return target


def noisy(matrix: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`matrix` rows plus 1 % Gaussian noise, renormalised to unit length (float32)."""
    out = matrix + rng.standard_normal(matrix.shape).astype(np.float32) * 0.01
    unit: np.ndarray = (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)
    return unit


def collection_store(data_dir: Path, into: Path) -> Any:
    """The python-faq collection's SqliteStore, opened on a copy of its database under `into`."""
    from core.store.sqlite_store import SqliteStore

    database = next(data_dir.glob(f"tenants/*/{faq_index.COLLECTION}/store.sqlite3"))
    for path in database.parent.glob(database.name + "*"):
        shutil.copy(path, into / path.name)
    return SqliteStore.open(into / database.name)


def live_vectors(store: Any) -> tuple[np.ndarray, np.ndarray]:
    """All live (row ids, vectors) of the store."""
    batches = list(store.iter_live_vectors())
    return np.concatenate([b[0] for b in batches]), np.concatenate([b[1] for b in batches])


def full_size(vectors: np.ndarray, size: int, seed: int = 16) -> np.ndarray:
    """`size` unit vectors: `vectors` repeated, each copy after the first with 1 % noise."""
    rng = np.random.default_rng(seed)
    reps = -(-size // len(vectors))
    tiled = np.concatenate([vectors] * reps)[:size].copy()
    noise = rng.standard_normal(tiled.shape).astype(np.float32) * 0.01
    noise[: len(vectors)] = 0.0
    tiled += noise
    tiled /= np.linalg.norm(tiled, axis=1, keepdims=True)
    return np.ascontiguousarray(tiled, dtype=np.float32)


@contextmanager
def alone_max(queries_alone: int) -> Iterator[None]:
    """`faiss_threads.ALONE_MAX_QUERIES` set for the block (0: the default team always)."""
    from core.dense import faiss_threads

    before = faiss_threads.ALONE_MAX_QUERIES
    faiss_threads.ALONE_MAX_QUERIES = queries_alone
    try:
        yield
    finally:
        faiss_threads.ALONE_MAX_QUERIES = before


def timed_serial(search: Callable[[np.ndarray], Any], matrix: np.ndarray) -> float:
    """Mean ms per query, one query at a time."""
    started = time.perf_counter()
    for row in matrix:
        search(row[None, :])
    return 1000.0 * (time.perf_counter() - started) / len(matrix)


def timed_threads(search: Callable[[np.ndarray], Any], matrix: np.ndarray, threads: int) -> float:
    """Wall ms per query with `threads` threads searching the queries between them."""

    def work(offset: int) -> None:
        for row in matrix[offset::threads]:
            search(row[None, :])

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return 1000.0 * (time.perf_counter() - started) / len(matrix)


def faiss_section(store: Any, query_vectors: np.ndarray, rounds: int) -> dict[str, Any]:
    """FAISS flat at the full corpus size: default OpenMP team vs one thread per single query."""
    from core.dense.faiss_index import FaissIndex
    from core.dense.spec import DenseIndexSpec

    _, vectors = live_vectors(store)
    matrix = full_size(vectors, FULL_CHUNKS)
    index = FaissIndex.create(DenseIndexSpec(), matrix.shape[1])
    index.add(np.arange(1, len(matrix) + 1, dtype=np.int64), matrix)

    def search(row: np.ndarray) -> Any:
        return index.search(row, DEPTH)

    variants = {"before (OpenMP team)": 0, "after (alone)": 1}
    rows: list[dict[str, Any]] = []
    for round_ in range(1, rounds + 1):
        for name, alone in variants.items():
            with alone_max(alone):
                rows.append(
                    {
                        "variant": name,
                        "round": round_,
                        "serial ms/query": round(timed_serial(search, query_vectors), 3),
                        f"{THREADS} threads ms/query": round(
                            timed_threads(search, query_vectors, THREADS), 3
                        ),
                        "load": round(os.getloadavg()[0], 2),
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
    results = {}
    for name, alone in variants.items():
        with alone_max(alone):
            results[name] = [search(row[None, :]) for row in query_vectors]
    before, after = results.values()
    same = sum(bool((a[1] == b[1]).all()) for a, b in zip(before, after, strict=True))
    diff = max(float(np.abs(a[0] - b[0]).max()) for a, b in zip(before, after, strict=True))
    return {
        "vectors": list(matrix.shape),
        "runs": rows,
        "identical rankings": f"{same}/{len(query_vectors)}",
        "max score difference": diff,
    }


def old_section_vectors(store: Any, row_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """`SqliteStore.get_section_vectors` before the LRU: one SQLite join per call."""
    from core.store import schema
    from core.store.sqlite_store import _SECTION_SELECT

    rows = store._rows_by_id(_SECTION_SELECT + " WHERE c.row_id IN ({})", row_ids)
    rows.sort(key=lambda row: int(row[0]))
    ids = np.array([int(row[0]) for row in rows], dtype=np.int64)
    return ids, schema.vectors_from_blobs([bytes(row[1]) for row in rows])


def sections_section(store: Any, query_vectors: np.ndarray, rounds: int) -> dict[str, Any]:
    """Store reads of each question's dense candidates, every question in turn (the load's
    pattern): section vectors read from SQLite per call (the old code) vs through the store's
    LRU, and chunks through the chunk LRU at the old size (4,096) vs the new one."""
    from core.dense.exact import exact_top_k
    from core.store import sqlite_store

    ids, vectors = live_vectors(store)
    _, top = exact_top_k(query_vectors, vectors, ids, DEPTH)
    candidates = [[int(i) for i in row if i >= 0] for row in top]
    new_size = sqlite_store.CHUNK_CACHE_SIZE

    def chunks_at(size: int) -> Callable[[list[int]], Any]:
        def fetch(rows: list[int]) -> Any:
            sqlite_store.CHUNK_CACHE_SIZE = size
            return store.get_chunks(rows)

        return fetch

    variants: dict[str, tuple[Callable[[list[int]], Any], Callable[[], None]]] = {
        "section vectors, before (SQLite per call)": (
            lambda rows: old_section_vectors(store, rows),
            lambda: None,
        ),
        "section vectors, after (store LRU)": (store.get_section_vectors, store._sections.clear),
        "chunks, before (LRU of 4,096)": (chunks_at(4096), store._chunks.clear),
        f"chunks, after (LRU of {new_size:,})": (chunks_at(new_size), store._chunks.clear),
    }
    rows: list[dict[str, Any]] = []
    for round_ in range(1, rounds + 1):
        for name, (fetch, clear) in variants.items():
            clear()
            for row in candidates:
                fetch(row)  # warm: SQLite's page cache, and the LRU as far as it holds
            started = time.perf_counter()
            for row in candidates:
                fetch(row)
            ms = 1000.0 * (time.perf_counter() - started) / len(candidates)
            rows.append(
                {
                    "variant": name,
                    "round": round_,
                    "ms/query": round(ms, 4),
                    "load": round(os.getloadavg()[0], 2),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    sqlite_store.CHUNK_CACHE_SIZE = new_size
    same = 0
    for row in candidates:
        ids_a, vec_a = old_section_vectors(store, row)
        ids_b, vec_b = store.get_section_vectors(row)
        same += int(np.array_equal(ids_a, ids_b) and np.array_equal(vec_a, vec_b))
    distinct = len({i for row in candidates for i in row})
    return {
        "runs": rows,
        "identical outputs": f"{same}/{len(candidates)}",
        "distinct candidates": distinct,
    }


def start_server(code: Path | None, data: Path, log: Path) -> ServeSubprocess:
    """`groundwire serve` running the code of `code` (this tree when None) on a copy of `data`."""
    copy = log.parent / f"{log.stem}-data"
    shutil.copytree(data, copy)
    env = dict(SERVER_ENV)
    if code is not None:
        # PYTHONSAFEPATH: `python -m server` must not put the current directory (this tree) first
        env["PYTHONPATH"] = f"{code}{os.pathsep}{code / 'clients' / 'python'}"
        env["PYTHONSAFEPATH"] = "1"
    return ServeSubprocess.start(copy, log, env=env, timeout_s=600)


def measure(
    server: ServeSubprocess, texts: list[str], mode: str, c: int, s: float
) -> dict[str, Any]:
    """One load run: the client's figures, server cores busy and CPU ms per query."""
    pid = server.process.pid
    cpu, wall = cpu_seconds(pid), time.monotonic()
    row = grpc_load.retrieve_load(server.target, texts, mode, c, 1, s)
    cores = (cpu_seconds(pid) - cpu) / (time.monotonic() - wall)
    row["server_cores"] = round(cores, 2)
    rate = row.get("queries/s")
    row["server_cpu_ms/query"] = round(1000.0 * cores / rate, 2) if rate else None
    row["load"] = round(os.getloadavg()[0], 2)
    return row


def hits_of(stub: Any, query: str, mode: str) -> list[tuple[str, float]]:
    """(chunk id, score) of each hit, in rank order."""
    request = rs.RetrieveRequest(query=query, collection=faq_index.COLLECTION, top_k=10)
    request.hybrid.mode = grpc_load_modes()[mode]
    response = stub.Retrieve(request, timeout=60)
    return [(hit.chunk.chunk_id, hit.score) for hit in response.hits]


def grpc_load_modes() -> dict[str, Any]:
    """The client's mode names."""
    return {"dense": rs.RETRIEVAL_MODE_DENSE, "hybrid": rs.RETRIEVAL_MODE_HYBRID}


def compare_hits(targets: list[str], texts: list[str], modes: list[str]) -> dict[str, Any]:
    """Every question through both servers: identical hit lists, and the largest score gap."""
    channels = [grpc.insecure_channel(target) for target in targets]
    try:
        stubs = [rs_grpc.RetrievalServiceStub(channel) for channel in channels]
        report: dict[str, Any] = {}
        for mode in modes:
            same, gap = 0, 0.0
            for text in texts:
                before, after = (hits_of(stub, text, mode) for stub in stubs)
                same += int([c for c, _ in before] == [c for c, _ in after])
                gap = max([gap] + [abs(a[1] - b[1]) for a, b in zip(before, after, strict=False)])
            report[mode] = {"identical hit lists": f"{same}/{len(texts)}", "max score gap": gap}
        return report
    finally:
        for channel in channels:
            channel.close()


def servers_section(
    baseline: Path, data: Path, texts: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    """Both servers up at once, runs interleaved, then the hits compared."""
    grpc_load.COLLECTION = faq_index.COLLECTION
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="hot_path_") as tmp:
        servers: dict[str, ServeSubprocess] = {}
        try:
            servers["before"] = start_server(baseline, data, Path(tmp) / "before.log")
            servers["after"] = start_server(None, data, Path(tmp) / "after.log")
            for server in servers.values():  # warm: first calls load lazily
                grpc_load.retrieve_load(server.target, texts, "hybrid", 8, 1, 3.0)
            for mode in args.modes:
                for concurrency in args.concurrency:
                    for round_ in range(1, args.rounds + 1):
                        for name, server in servers.items():
                            row = measure(server, texts, mode, concurrency, args.duration)
                            row.update(variant=name, round=round_)
                            print(json.dumps(row), flush=True)
                            runs.append(row)
            agreement = compare_hits([s.target for s in servers.values()], texts, args.modes)
            profiles = {}
            if args.profile:
                for name, server in servers.items():
                    profiles[name] = spy(server, texts, args.modes[0], PROFILE_C, args.duration)
                    print(json.dumps(profiles[name]), flush=True)
        finally:
            for server in servers.values():
                server.stop()
    return {"runs": runs, "agreement": agreement, "profiles": profiles}


PROFILE_C = 8
PY_SPY = Path(os.environ.get("PY_SPY", str(Path(sys.executable).with_name("py-spy"))))
WHERE = (
    ("model forward (batcher thread)", ("MicroBatchingEmbedder._run",)),
    ("dense search (FAISS)", ("dense_search",)),
    ("lexical search (Tantivy)", ("lexical_search",)),
    ("section vectors", ("_with_sections",)),
    ("store chunk reads", ("get_chunks",)),
    ("context assembly", ("assemble_context",)),
    ("other pipeline stages", ("RetrievalPipeline.",)),
    ("worker threads waking / handing results back", ("concurrent/futures/thread.py",)),
    ("event loop: gRPC edge, conversions, asyncio", ("",)),
)
"""Where a py-spy sample goes: the first row whose needle is in its stack."""


def spy(server: ServeSubprocess, texts: list[str], mode: str, c: int, s: float) -> dict[str, Any]:
    """py-spy (raw stacks, 100 Hz) on the server under load: share of active samples by WHERE.
    Threads waiting for the GIL count as active, so the hand-off rows are mostly GIL waits."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "stacks.txt"
        recorder = subprocess.Popen(
            [str(PY_SPY), "record", "--pid", str(server.process.pid), "--duration", str(int(s))]
            + ["--rate", "100", "--nonblocking", "--format", "raw", "--output", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        grpc_load.retrieve_load(server.target, texts, mode, c, 1, s)
        recorder.wait(timeout=s + 60)
        raw = out.read_text() if out.exists() else ""
    shares = dict.fromkeys((name for name, _ in WHERE), 0)
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        total += int(count)
        name = next(name for name, needles in WHERE if any(n in stack for n in needles))
        shares[name] += int(count)
    shares_pct = {k: round(100.0 * v / total, 1) for k, v in shares.items()} if total else {}
    return {"mode": mode, "concurrency": c, "samples": total, "shares_%": shares_pct}


def summary(runs: list[dict[str, Any]], keys: tuple[str, ...], value: str) -> dict[str, float]:
    """Median of `value` per combination of `keys`."""
    groups: dict[str, list[float]] = {}
    for row in runs:
        if row.get(value) is not None:
            groups.setdefault(" ".join(str(row[k]) for k in keys), []).append(float(row[value]))
    return {k: round(statistics.median(v), 3) for k, v in groups.items()}


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown tables."""
    lines = [
        "# Retrieve's hot path beside the model (#16): before/after, interleaved",
        "",
        f"{report['date']}, {report['machine']}. `python -m benchmarks.retrieve.hot_path "
        f"--baseline <checkout of {report['baseline']}>`; after = {report['commit']}.",
        "",
        f"uptime before: `{report['uptime_before']}`  ",
        f"uptime after: `{report['uptime_after']}`",
        "",
    ]
    faiss_part = report.get("faiss")
    if faiss_part:
        lines += [
            f"## FAISS flat, {faiss_part['vectors'][0]:,} x {faiss_part['vectors'][1]}, "
            f"top {DEPTH}, 172 questions",
            "",
            f"Rankings identical: {faiss_part['identical rankings']}; largest score difference "
            f"{faiss_part['max score difference']:.2e}.",
            "",
            f"| variant | round | serial ms/query | {THREADS} threads ms/query (wall) | load |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['variant']} | {r['round']} | {r['serial ms/query']} "
            f"| {r[f'{THREADS} threads ms/query']} | {r['load']} |"
            for r in faiss_part["runs"]
        ]
        lines.append("")
    sections_part = report.get("sections")
    if sections_part:
        lines += [
            f"## Store reads of {DEPTH} dense candidates per question, questions in turn (store "
            "of the served collection)",
            "",
            f"{sections_part['distinct candidates']:,} distinct candidates; section vectors "
            f"identical to the old reads: {sections_part['identical outputs']}.",
            "",
            "| variant | round | ms/query | load |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {r['variant']} | {r['round']} | {r['ms/query']} | {r['load']} |"
            for r in sections_part["runs"]
        ]
        lines.append("")
    servers = report.get("servers")
    if servers:
        lines += [
            f"## End to end: `groundwire serve` before and after, caches off, "
            f"{report['chunks']} chunks, {report['duration_s']} s per run",
            "",
            "Hits through both servers, every question: "
            + "; ".join(
                f"{mode}: {v['identical hit lists']} identical, largest score gap "
                f"{v['max score gap']:.2e}"
                for mode, v in servers["agreement"].items()
            ),
            "",
            "| mode | c | round | variant | queries/s | p50 ms | p99 ms | errors | server cores "
            "| server CPU ms/query | load |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['mode']} | {r['concurrency']} | {r['round']} | {r['variant']} "
            f"| {r.get('queries/s')} | {r.get('p50_ms')} | {r.get('p99_ms')} | {r['errors']} "
            f"| {r['server_cores']} | {r['server_cpu_ms/query']} | {r['load']} |"
            for r in servers["runs"]
        ]
        lines += ["", "Medians over rounds:", "", "| mode c variant | queries/s | p50 ms |"]
        lines.append("|---|---|---|")
        rates = summary(servers["runs"], ("mode", "concurrency", "variant"), "queries/s")
        p50 = summary(servers["runs"], ("mode", "concurrency", "variant"), "p50_ms")
        lines += [f"| {k} | {v} | {p50.get(k)} |" for k, v in rates.items()]
        profiles = servers.get("profiles") or {}
        if profiles:
            names = list(profiles)
            first = profiles[names[0]]
            lines += [
                "",
                f"py-spy, {first['mode']} at c={first['concurrency']}, {report['duration_s']} s, "
                "share of active samples (threads waiting for the GIL count as active): "
                + ", ".join(f"{n} {profiles[n]['samples']} samples" for n in names),
                "",
                "| where | " + " | ".join(f"{n} %" for n in names) + " |",
                "|---|" + "---|" * len(names),
            ]
            lines += [
                f"| {where} | "
                + " | ".join(str(profiles[n]["shares_%"].get(where, 0.0)) for n in names)
                + " |"
                for where, _ in WHERE
            ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="checkout of the before code")
    parser.add_argument("--data-dir", type=Path, help="data directory with python-faq")
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--modes", nargs="+", default=["hybrid", "dense"])
    parser.add_argument("--no-servers", dest="servers", action="store_false")
    parser.add_argument("--profile", action="store_true", help="py-spy both servers at c=8")
    parser.add_argument(
        "--pad-to", type=int, default=0, help="serve the collection padded to N chunks (19551)"
    )
    parser.add_argument("--cache", type=Path, default=faq_index.DEFAULT_CACHE)
    parser.add_argument("--tag", default="", help="suffix of the result file names")
    parser.add_argument("--after-label", default="", help="names this tree (default: git HEAD)")
    args = parser.parse_args()
    from core.embed.sentence_transformer_embedder import (
        SentenceTransformerEmbedder,
        default_model_path,
    )

    data = args.data_dir or faq_index.ensure_index(sections=faq_index.QUICK_SECTIONS)[0]
    if args.pad_to:
        data = padded(data, args.pad_to, args.cache)
    texts = queries()
    scratch = tempfile.TemporaryDirectory(prefix="hot_path_store_")
    store = collection_store(data, Path(scratch.name))
    model = SentenceTransformerEmbedder(default_model_path(), "cpu")
    query_vectors = np.asarray(model.embed_queries(texts), dtype=np.float32)
    del model
    report: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "baseline": args.baseline.name,
        "commit": args.after_label or _commit(),
        "chunks": len(live_vectors(store)[0]),
        "duration_s": args.duration,
        "uptime_before": uptime(),
    }
    report["faiss"] = faiss_section(store, query_vectors, args.rounds)
    report["sections"] = sections_section(store, query_vectors, args.rounds)
    if args.servers:
        report["servers"] = servers_section(args.baseline.resolve(), data, texts, args)
    report["uptime_after"] = uptime()
    store.close()
    scratch.cleanup()
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = "retrieve_hot_path" + (f"-{args.tag}" if args.tag else "")
    (RESULTS / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / f"{stem}.md").write_text(markdown(report))
    print(markdown(report))


def _commit() -> str:
    from benchmarks.ghz.machine import git_commit

    return git_commit(ROOT)


if __name__ == "__main__":
    main()
