"""GPU benchmark: the hardware's raw ceilings and groundwire's own numbers, in one run.

Run (GPU machine): python benchmarks/gpu/gpu_bench.py
Run (anywhere, tiny sizes, < 2 minutes on 2 CPU cores): python benchmarks/gpu/gpu_bench.py --smoke

Raw ceilings (torch only): memory copy bandwidth, fp16 matmul rate, matmul + top-10 over 1M x 384
and 10M x 384 corpora at query batch 1, 16, 128, 1024 (with memory and compute floors), encoder
forward throughput at batch 1...1024 (seq 32), and the encoder replayed as a CUDA graph for fixed
batch buckets. groundwire's numbers: single-query embedding (host NumPy and device tensor paths),
micro-batched embedding under N concurrent callers, dense search through the engine
`core.dense.engine_factory` picks (plus FAISS CPU flat as the reference when faiss is installed),
and Retrieve (dense and hybrid) through a real gRPC server on loopback with many concurrent
clients, with GPU utilisation sampled meanwhile. Works without faiss (torch engine only).
Prints each table and writes benchmarks/results/gpu_bench-<device>[-smoke].{json,md}.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import platform
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bench_report
import raw_ceilings as raw
import service_bench as service
import torch
from bench_plan import Plan
from gpu_utilisation import UtilisationSampler
from sentence_transformers import SentenceTransformer

from core.dense.engine_factory import probe_faiss
from core.embed.device import select_device
from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder, default_model_path
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a file: `benchmarks` importable

from benchmarks.ghz.faq_index import DEFAULT_DATASET  # noqa: E402

DIM = 384


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (CPU validation)")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    parser.add_argument("--model-path", default="", help="sentence-transformers directory")
    parser.add_argument(
        "--dataset",
        type=Path,
        default=DEFAULT_DATASET,
        help="BEIR dir for queries/docs (default: $PYTHON_FAQ_DIR, else shared/data/python-faq "
        "beside the checkout)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--skip", nargs="*", default=[], help="section names to skip")
    parser.add_argument("--tag", default="", help="suffix of the result files' names")
    parser.add_argument(
        "--corpus-rows", type=int, nargs="*", default=None, help="raw top-k corpus sizes"
    )
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=0,
        help="torch intra-op threads (0: torch's default; 1 with --smoke on CPU)",
    )
    parser.add_argument(
        "--without-faiss", action="store_true", help="act as if faiss were not installed"
    )
    args = parser.parse_args()
    if args.without_faiss:
        if "faiss" in sys.modules:
            raise SystemExit("faiss was imported before --without-faiss could hide it")
        sys.modules["faiss"] = None  # type: ignore[assignment]  # makes `import faiss` fail
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("core.dense.engine_factory").setLevel(logging.INFO)
    choice = select_device(args.device)
    plan = Plan.smoke() if args.smoke else Plan.full(choice.device)
    if args.corpus_rows:
        plan = dataclasses.replace(plan, corpus_rows=tuple(args.corpus_rows))
    threads = args.torch_threads or (1 if args.smoke and choice.device == "cpu" else 0)
    if threads:
        torch.set_num_threads(
            threads
        )  # shared CPUs: spinning intra-op threads cost more than they give
    print(f"device: {choice.device} ({choice.reason}); plan: {'smoke' if args.smoke else 'full'}")
    results = run(plan, choice.device, args)
    json_path, md_path = bench_report.write(results, args.out, args.tag)
    print(f"\nwrote {json_path} and {md_path}")


def run(plan: Plan, device: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every section in order; a failing section is recorded under "errors", the run goes on."""
    model_path = args.model_path or default_model_path()
    queries = load_queries(args.dataset)
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "smoke": plan.name == "smoke",
        "device": device_info(device),
        "plan": dataclasses.asdict(plan),
        "sections": {},
        "errors": {},
        "section_seconds": {},
    }

    def section(name: str, produce: Callable[[], Any]) -> None:
        if name in args.skip:
            results["errors"][name] = "skipped (--skip)"
            return
        started = time.perf_counter()
        try:
            value = produce()
        except Exception as exc:
            traceback.print_exc()
            results["errors"][name] = f"{type(exc).__name__}: {exc}"[:300]
            return
        finally:
            results["section_seconds"][name] = round(time.perf_counter() - started, 1)
        results["sections"][name] = value
        results["targets"] = bench_report.targets(results)
        bench_report.write(
            results, args.out, args.tag
        )  # after every section: a cut-off run keeps its rows
        rows = value if isinstance(value, list) else [value]
        print(f"\n## {name}\n{bench_report.markdown_table(rows)}", flush=True)

    section("copy_bandwidth", lambda: raw.copy_bandwidth(device, plan.copy_bytes, plan.timer))
    section("matmul_rate", lambda: raw.matmul_rate(device, plan.matmul_size, plan.timer))
    section("matmul_top_k", lambda: raw_top_k(plan, device, results["sections"]))
    encoder_sections(section, model_path, device, plan, results["errors"])
    embedding_sections(section, model_path, device, plan, queries, results["device"])
    section(
        "dense_search",
        lambda: service.dense_search(
            device, plan.engine_rows, DIM, list(plan.top_k_batches), plan.timer
        ),
    )
    release_memory(device)
    section(
        "single_query_paths",
        lambda: service.single_query_paths(device, plan.engine_rows, DIM, plan.timer),
    )
    release_memory(device)
    section("retrieve", lambda: retrieve(plan, device, args, queries))
    results["targets"] = bench_report.targets(results)
    print(f"\n## targets\n{bench_report.markdown_table(results['targets'])}")
    return results


Section = Callable[[str, Callable[[], Any]], None]


def encoder_sections(
    section: Section, model_path: str, device: str, plan: Plan, errors: dict[str, str]
) -> None:
    """Raw encoder forward throughput and, on CUDA, CUDA-graph replay (model freed after)."""
    encoder = load_encoder(model_path, device)
    batches, buckets, timer = list(plan.forward_batches), list(plan.graph_buckets), plan.timer
    section("model_forward", lambda: raw.model_forward(encoder, batches, 32, timer))
    if device.startswith("cuda"):
        section("cuda_graph", lambda: raw.cuda_graph_encoder(encoder, buckets, 32, timer))
    else:
        errors["cuda_graph"] = "needs CUDA"


def embedding_sections(
    section: Section,
    model_path: str,
    device: str,
    plan: Plan,
    queries: list[str],
    info: dict[str, Any],
) -> None:
    """groundwire's embedder: single queries, then micro-batched under concurrent callers."""
    embedder = SentenceTransformerEmbedder(model_path, device)
    embedder.warm_up_query_graphs()
    info["embedder_precision"] = embedder.precision
    info["query_graphs"] = embedder.query_graphs
    eager = (
        SentenceTransformerEmbedder(model_path, device, cuda_graphs=False)
        if device.startswith("cuda")
        else None
    )
    section(
        "single_query_embedding",
        lambda: service.single_query_embedding(embedder, queries, plan.timer, eager),
    )
    settings = Settings().model
    section(
        "batched_embedding",
        lambda: service.batched_embedding(
            embedder, queries, list(plan.callers), plan.duration_s, settings
        ),
    )


def raw_top_k(plan: Plan, device: str, sections: dict[str, Any]) -> list[dict[str, Any]]:
    """Raw matmul + top-10 for each corpus size, floors from the same run's ceilings."""
    bandwidth = sections["copy_bandwidth"]["GB/s"]
    tflops = sections["matmul_rate"]["TFLOP/s"]
    rows: list[dict[str, Any]] = []
    for count in plan.corpus_rows:
        corpus = raw.random_corpus(count, DIM, device)
        rows += raw.matmul_top_k(
            corpus, list(plan.top_k_batches), 10, bandwidth, tflops, plan.timer
        )
        del corpus
        release_memory(device)
    return rows


def load_encoder(model_path: str, device: str) -> Any:
    """The bare transformer of the sentence-transformers model, fp16 on CUDA, in eval mode."""
    model = SentenceTransformer(model_path, device=device, local_files_only=True)
    if device.startswith("cuda"):
        model.half()
    return model[0].auto_model.eval()


def retrieve(plan: Plan, device: str, args: argparse.Namespace, queries: list[str]) -> list[Any]:
    """Retrieve load through a real server holding `plan.corpus_docs` python-faq sections.

    Imported here: the server stack imports faiss (collections still build FAISS indexes).
    """
    import grpc_load

    base = Settings()
    with tempfile.TemporaryDirectory(prefix="gw-bench-") as data_dir:
        settings = base.replace(
            server=dataclasses.replace(
                base.server, host="127.0.0.1", port=0, worker_threads=plan.server_threads
            ),
            model=dataclasses.replace(
                base.model, device=device, embedding_model_path=args.model_path
            ),
            storage=dataclasses.replace(base.storage, data_dir=data_dir, seed_demo_corpus=False),
            # caches off: the load cycles through the same queries, which would be answered from
            # the retrieval cache after the first pass
            cache=dataclasses.replace(base.cache, enabled=False),
        )
        started = time.perf_counter()
        server = grpc_load.LoopbackServer(settings).start()
        print(f"server ready in {time.perf_counter() - started:.1f} s", flush=True)
        try:
            started = time.perf_counter()
            sent = grpc_load.upsert_sections(
                server.target, args.dataset / "corpus.jsonl", plan.corpus_docs
            )
            print(f"upserted {sent} sections in {time.perf_counter() - started:.1f} s")
            engine = server_dense_engine(server)
            rows = []
            for mode in ("dense", "hybrid"):
                for concurrency in plan.concurrency:
                    with UtilisationSampler(device) as utilisation:
                        row = grpc_load.retrieve_load(
                            server.target,
                            queries,
                            mode,
                            concurrency,
                            plan.client_processes,
                            plan.duration_s,
                        )
                    row["gpu_util_%"] = utilisation.mean_percent()
                    row["server_dense_engine"] = engine
                    rows.append(row)
                    print(row, flush=True)
            return rows
        finally:
            server.stop()


def server_dense_engine(server: Any) -> str:
    """Class and device of the dense index the server's collections use (best effort)."""
    try:
        assert server.server is not None
        names = set()
        for _, collection in server.server.runtime.catalog.all():
            dense = getattr(collection, "_dense", None)
            names.add(f"{type(dense).__name__}@{getattr(dense, 'device', 'cpu')}")
        return ", ".join(sorted(names))
    except Exception as exc:
        return f"unknown ({exc})"


def load_queries(dataset: Path) -> list[str]:
    """The python-faq questions, or generated ones when the dataset is absent."""
    path = dataset / "queries.jsonl"
    if path.exists():
        with path.open(encoding="utf-8") as lines:
            return [json.loads(line)["text"] for line in lines]
    return [f"how do I configure option number {i} of the server?" for i in range(200)]


def device_info(device: str) -> dict[str, Any]:
    """Name, software versions and what faiss offers, for the report header."""
    faiss = probe_faiss()
    if device.startswith("cuda"):
        name = torch.cuda.get_device_name(torch.device(device))
    else:
        name = f"CPU {os.cpu_count()} cores ({platform.machine()})"
    return {
        "name": name,
        "device": device,
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "none",
        "faiss": f"installed, {faiss.gpus} GPU(s)" if faiss.installed else "not installed",
        "cpu_cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
    }


def release_memory(device: str) -> None:
    """Return cached device memory between sections."""
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
