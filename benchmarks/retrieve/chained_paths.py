"""The server's two coroutine paths of one Retrieve, in one process: CPU per call, interleaved.

Run from the repository root (PYTHONPATH=$PWD:$PWD/clients/python in a worktree):
    python -m benchmarks.retrieve.chained_paths [--data-dir D] [--clients 8] [--calls 516]
        [--rounds 4]

Opens a copy of the cached whole python-faq index (benchmarks/ghz/faq_index.py), the query model
as the server builds it (`build_embedder`, one onnxruntime thread, behind the
`MicroBatchingEmbedder`), the server's two pools (`gw-work`, `gw-lexical`) and no caches, then
drives `--clients` concurrent callers on one event loop through the 172 python-faq questions,
`--calls` calls per run, round after round alternating:

- *awaited* (main before #16's lean path): `RetrievalPipeline.retrieve_async`, the stages before
  and after the embedding offloaded with `run_in_executor`, the embedding awaited on the loop,
  the lexical search on the lexical pool;
- *chained*: `RetrievalPipeline.retrieve_chained` (core/retrieve/chained_retrieval.py).

No gRPC: what differs is the hand-offs. Reports the process's CPU (every thread) per call, calls
per second, and checks every question's hits and context agree between the paths (scores to 4
decimals: a batch's composition may move the last float bits). Writes
results/retrieve_chained_paths.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.ghz.faq_index import COLLECTION, DEFAULT_CACHE, DEFAULT_DATASET, ensure_index
from benchmarks.ghz.machine import uptime
from benchmarks.ghz.request_files import load_questions
from benchmarks.ghz.run import RESULTS
from core.catalog.catalog import CollectionCatalog
from core.embed.embedder_factory import build_embedder
from core.embed.micro_batcher import MicroBatchingEmbedder
from core.embed.sentence_transformer_embedder import default_model_path
from core.retrieve.pipeline import RetrievalPipeline
from core.retrieve.request import RetrievalRequest, RetrievalResult
from server.settings import Settings

Call = Callable[[RetrievalRequest], Coroutine[Any, Any, RetrievalResult]]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_CACHE, help="index cache")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--calls", type=int, default=516, help="calls per run (3 passes)")
    parser.add_argument("--rounds", type=int, default=4)
    return parser.parse_args()


async def drive(call: Call, requests: list[RetrievalRequest], clients: int) -> list[Any]:
    """`clients` callers taking the next request until none is left; results in request order."""
    results: list[Any] = [None] * len(requests)
    position = iter(range(len(requests)))

    async def client() -> None:
        for index in position:
            results[index] = await call(requests[index])

    await asyncio.gather(*(client() for _ in range(clients)))
    return results


def comparable(result: RetrievalResult) -> tuple[object, ...]:
    hits = tuple((h.chunk.row_id, h.rank, round(h.score, 4)) for h in result.hits)
    return hits, result.context.text, tuple(c.chunk_id for c in result.context.citations)


def main() -> None:
    args = parse_args()
    index_dir, index = ensure_index(args.dataset, args.data_dir, None)
    settings = Settings()
    questions = load_questions(args.dataset)
    load_before = uptime()
    with tempfile.TemporaryDirectory(prefix="gw-chained-") as tmp:
        shutil.copytree(index_dir, Path(tmp) / "data")
        catalog = CollectionCatalog(Path(tmp) / "data")
        catalog.open_all()
        tenant = next(p.name for p in (Path(tmp) / "data" / "tenants").iterdir())
        model = settings.model
        inner = build_embedder(
            str(default_model_path()), model.runtime, device="cpu",
            batch_size=model.batch_size, onnx_cache=args.data_dir / "models", onnx_threads=1,
            lazy_documents=True,
        )  # fmt: skip
        batched = MicroBatchingEmbedder(
            inner, model.query_batch_max, model.query_batch_wait_ms, model.query_queue_max
        )
        work = ThreadPoolExecutor(settings.server.worker_threads, thread_name_prefix="gw-work")
        lexical = ThreadPoolExecutor(settings.server.worker_threads, "gw-lexical")
        pipeline = RetrievalPipeline(catalog, batched, lexical)

        async def awaited(request: RetrievalRequest) -> RetrievalResult:
            loop = asyncio.get_running_loop()
            return await pipeline.retrieve_async(
                request, lambda fn, *a: loop.run_in_executor(work, fn, *a)
            )

        async def chained(request: RetrievalRequest) -> RetrievalResult:
            return await pipeline.retrieve_chained(request, work)

        paths: dict[str, Call] = {"awaited": awaited, "chained": chained}
        every = [RetrievalRequest(q, COLLECTION, tenant=tenant) for q in questions]
        answers = {name: asyncio.run(drive(call, every, 1)) for name, call in paths.items()}
        differing = sum(
            comparable(a) != comparable(b)
            for a, b in zip(answers["awaited"], answers["chained"], strict=True)
        )
        requests = [every[i % len(every)] for i in range(args.calls)]
        rows: list[dict[str, Any]] = []
        for round_ in range(args.rounds):
            order = list(paths) if round_ % 2 == 0 else list(reversed(paths))
            for name in order:
                cpu, wall = time.process_time(), time.monotonic()
                asyncio.run(drive(paths[name], requests, args.clients))
                cpu, wall = time.process_time() - cpu, time.monotonic() - wall
                rows.append(
                    {
                        "path": name,
                        "round": round_,
                        "cpu_ms_per_call": round(cpu / args.calls * 1000.0, 3),
                        "calls_per_s": round(args.calls / wall, 1),
                        "cores_busy": round(cpu / wall, 2),
                    }
                )
                print(rows[-1])
        batched.close()
        work.shutdown()
        lexical.shutdown()
    record = {
        "corpus": {"documents": index["documents"], "chunks": index["chunks"]},
        "clients": args.clients,
        "calls_per_run": args.calls,
        "questions_differing": differing,
        "uptime_before": load_before,
        "uptime_after": uptime(),
        "rows": rows,
        "median": {
            name: {
                key: statistics.median(r[key] for r in rows if r["path"] == name)
                for key in ("cpu_ms_per_call", "calls_per_s", "cores_busy")
            }
            for name in paths
        },
    }
    (RESULTS / "retrieve_chained_paths.json").write_text(json.dumps(record, indent=2) + "\n")
    (RESULTS / "retrieve_chained_paths.md").write_text(markdown(record))
    print(markdown(record))


def markdown(record: dict[str, Any]) -> str:
    lines = [
        "# Retrieve's coroutine paths in one process (python-faq whole corpus, no gRPC)",
        "",
        f"{record['clients']} concurrent callers, {record['calls_per_run']} calls per run, "
        f"rounds alternating; questions whose hits or context differ between the paths: "
        f"**{record['questions_differing']}**. Load before: `{record['uptime_before']}`, "
        f"after: `{record['uptime_after']}`.",
        "",
        "| path | CPU ms / call (median) | calls/s | cores busy | every round's CPU ms / call |",
        "|---|---:|---:|---:|---|",
    ]
    for name, median in record["median"].items():
        each = ", ".join(str(r["cpu_ms_per_call"]) for r in record["rows"] if r["path"] == name)
        lines.append(
            f"| {name} | {median['cpu_ms_per_call']:.2f} | {median['calls_per_s']:.1f} | "
            f"{median['cores_busy']:.2f} | {each} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
