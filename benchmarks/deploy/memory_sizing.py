"""Memory a groundwire pod needs: the embedding model, and the FAISS index per 10k chunks.

Run from the repository root: python -m benchmarks.deploy.memory_sizing [--sizes 10000 50000]
Each figure is measured in a fresh Python process (resident set size, VmRSS, before and after),
beside groundwire's own estimate (`FaissIndex.memory_bytes`) and the file `save` writes:
- dense indexes: groundwire's `FaissIndex` (flat and HNSW with the default spec, M=32,
  efConstruction=80) filled with N random unit vectors of MiniLM's width (384); the memory of
  both structures depends on the count, not on the values;
- the model: the bundled all-MiniLM-L6-v2 loaded on CPU (`SentenceTransformerEmbedder`), then one
  batch of 32 texts of ~200 tokens embedded (the default indexing batch).
Prints the table and writes benchmarks/results/memory_sizing.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "results"
DIMENSION = 384
MIB = 1024 * 1024


def rss_bytes() -> int:
    """This process's resident set size."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def measure_index(kind: str, count: int) -> dict[str, Any]:
    """Child process: RSS growth of one filled FaissIndex, its estimate and its file size."""
    import numpy as np

    from core.dense.faiss_index import FaissIndex
    from core.dense.spec import DenseIndexSpec

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((count, DIMENSION), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(count, dtype=np.int64)
    before = rss_bytes()
    index = FaissIndex.create(DenseIndexSpec(kind=kind), DIMENSION)  # type: ignore[arg-type]
    for start in range(0, count, 1000):  # the indexer adds in batches too
        index.add(ids[start : start + 1000], vectors[start : start + 1000])
    grown = rss_bytes() - before
    with tempfile.TemporaryDirectory() as directory:
        index.save(Path(directory), 1)
        file_bytes = sum(p.stat().st_size for p in Path(directory).iterdir())
    return {"rss_bytes": grown, "estimate_bytes": index.memory_bytes(), "file_bytes": file_bytes}


def measure_model() -> dict[str, Any]:
    """Child process: RSS after imports, after loading the model, after one indexing batch."""
    import torch

    from core.embed.sentence_transformer_embedder import (
        SentenceTransformerEmbedder,
        default_model_path,
    )

    torch.set_num_threads(2)
    imported = rss_bytes()
    embedder = SentenceTransformerEmbedder(default_model_path(), device="cpu")
    loaded = rss_bytes()
    text = " ".join(["retrieval augmented generation over gRPC with cited context"] * 25)
    embedder.embed_documents([text] * 32)
    return {"imports_bytes": imported, "loaded_bytes": loaded, "after_batch_bytes": rss_bytes()}


def run_child(arguments: list[str]) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.deploy.memory_sizing", "--child", *arguments],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind = args.child[0]
        result = measure_model() if kind == "model" else measure_index(kind, int(args.child[1]))
        print(json.dumps(result))
        return

    rows = []
    for kind in ("flat", "hnsw"):
        for count in args.sizes:
            measured = run_child([kind, str(count)])
            per_10k = 10_000 / count
            rows.append({"kind": kind, "chunks": count, **measured, "per_10k": per_10k})
    model = run_child(["model"])
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
        "load": os.getloadavg(),
        "dimension": DIMENSION,
        "indexes": rows,
        "model": model,
    }
    lines = [
        "# Memory sizing (benchmarks/deploy/memory_sizing.py)",
        "",
        f"{report['date']}; {report['machine']}; load average {report['load'][0]:.1f}",
        "",
        "| index | chunks | RSS growth MiB | per 10k chunks MiB | estimate MiB | file MiB |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['kind']} | {row['chunks']:,} | {row['rss_bytes'] / MIB:.1f} | "
            f"{row['rss_bytes'] * row['per_10k'] / MIB:.1f} | {row['estimate_bytes'] / MIB:.1f} | "
            f"{row['file_bytes'] / MIB:.1f} |"
        )
    lines += [
        "",
        "| embedding model (CPU, fp32) | RSS MiB |",
        "|---|---|",
        f"| Python + torch + sentence-transformers imported | {model['imports_bytes'] / MIB:.0f} |",
        f"| + all-MiniLM-L6-v2 loaded | {model['loaded_bytes'] / MIB:.0f} |",
        f"| + one batch of 32 x ~200 tokens embedded | {model['after_batch_bytes'] / MIB:.0f} |",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "memory_sizing.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "memory_sizing.md").write_text(text)


if __name__ == "__main__":
    main()
