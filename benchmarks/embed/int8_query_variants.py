"""int8 quantisation recipes for the query model: fidelity to fp32 and CPU cost, side by side.

Run from the repository root:
    python -m benchmarks.embed.int8_query_variants [--rounds 5] [--threads 1] [--work-dir DIR]

Each variant is a `quantize_dynamic` of the cached fp32 export (the one `model.runtime = "onnx"`
serves; built if missing) with a different choice of weight MatMuls to quantise, per-channel or
per-tensor weights, `reduce_range`. Texts: the real questions of every labelled set given
(default python-faq, perl-faq, r-faq). Fidelity: cosine to the fp32 export's vector (which is
torch's to 1e-6), every question embedded alone and inside random batches of 8 (dynamic int8
quantises activations per call, so a vector moves with its batch); mean, min and the 1st
percentile. The per-token variants without a stated sign store their weights as this CPU multiplies
them exactly (core.embed.int8_weights: signed with VNNI, unsigned without); the "signed weights"
and "unsigned weights" variants force one, so a host without VNNI shows what saturation costs.
The "explicit ops" and "fused ops" variants spell the same per-token arithmetic in elementwise
operators or in per-axis Quantize/DequantizeLinear (core.embed.per_token_int8.QuantOps): their
vectors are identical, so they differ in speed only.
Speed: random batches of 1, 4 and 8 questions (the server's micro-batches), every
variant and fp32 taking turns per round on the same batches; CPU ms per query (process CPU time,
onnxruntime's pool included) and wall ms per batch, median over rounds; `--threads` intra-op
threads (1: what each of the 2 default server processes gets on this 2-core host).
Writes benchmarks/results/int8_query_variants{--name}.{json,md}, with the CPU's int8 flags.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import random
import statistics
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.embed.question_sets import SETS
from benchmarks.embed.question_sets import questions as labelled_questions
from benchmarks.ghz.faq_index import DEFAULT_CACHE
from core.embed.int8_weights import (
    EXACT_SIGNED_FLAGS,
    WeightSign,
    cpu_flags,
    exact_weight_sign,
)
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import cache_root, load_onnx_embedder, variant_dir
from core.embed.onnx_embedder import OnnxEmbedder, OnnxModelSpec
from core.embed.per_token_int8 import Picker, QuantOps, quantize_per_token
from core.embed.saved_tokenizer import load_tokenizer
from core.embed.sentence_transformer_embedder import default_model_path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
BATCH_SIZES = (1, 4, 8)
BATCHES_PER_CELL = {1: 48, 4: 16, 8: 10}
FIDELITY_BATCH = 8


def _layer(name: str) -> int:
    marker = "/layer."
    return int(name.split(marker)[1].split("/")[0]) if marker in name else -1


def _down(name: str, shape: tuple[int, ...]) -> bool:
    return shape[0] > shape[1]


def _attention_output(name: str, shape: tuple[int, ...]) -> bool:
    return "/attention/output/" in name


def _qkv(name: str, shape: tuple[int, ...]) -> bool:
    return "/attention/self/" in name


def _ffn_in(name: str, shape: tuple[int, ...]) -> bool:
    return "/intermediate/" in name


def _current(name: str, shape: tuple[int, ...]) -> bool:
    """The onnx-int8 recipe up to groundwire-onnx-2: q/k/v and feed-forward input projections."""
    return not _down(name, shape) and not _attention_output(name, shape)


def _every_matmul_per_token(**options: Any) -> tuple[Picker, dict[str, Any]]:
    """A per-token variant quantising every weight MatMul, with `options` for quantize_per_token."""
    return (lambda n, s: True), {"per_token": True, **options}


VARIANTS: dict[str, tuple[Picker, dict[str, Any]]] = {
    "all weight MatMuls": (lambda n, s: True, {"per_channel": True}),
    "all weight MatMuls, per tensor": (lambda n, s: True, {"per_channel": False}),
    "q/k/v + ffn-in (onnx-int8 up to groundwire-onnx-2)": (_current, {"per_channel": True}),
    "q/k/v + ffn-in, reduce_range": (_current, {"per_channel": True, "reduce_range": True}),
    "q/k/v + ffn-in, last layer fp32": (
        lambda n, s: _current(n, s) and _layer(n) != 5,
        {"per_channel": True},
    ),
    "q/k/v + ffn-in, first and last layer fp32": (
        lambda n, s: _current(n, s) and _layer(n) not in (0, 5),
        {"per_channel": True},
    ),
    "ffn-in only": (_ffn_in, {"per_channel": True}),
    "ffn-in + ffn-out": (lambda n, s: _ffn_in(n, s) or _down(n, s), {"per_channel": True}),
    "q/k/v only": (_qkv, {"per_channel": True}),
    "all but ffn-out": (lambda n, s: not _down(n, s), {"per_channel": True}),
    "all but attention-out": (lambda n, s: not _attention_output(n, s), {"per_channel": True}),
    "all but last layer's ffn-out": (
        lambda n, s: not (_down(n, s) and _layer(n) == 5),
        {"per_channel": True},
    ),
    "per-token: all weight MatMuls": _every_matmul_per_token(),
    "per-token: all weight MatMuls, 7-bit weights": _every_matmul_per_token(weight_bits=7),
    "per-token: all weight MatMuls, signed weights": _every_matmul_per_token(
        sign=WeightSign.SIGNED
    ),
    "per-token: all weight MatMuls, unsigned weights": _every_matmul_per_token(
        sign=WeightSign.UNSIGNED
    ),
    "per-token: all weight MatMuls, explicit ops": _every_matmul_per_token(ops=QuantOps.EXPLICIT),
    "per-token: all weight MatMuls, fused ops": _every_matmul_per_token(ops=QuantOps.FUSED),
    "per-token: all but ffn-out": (lambda n, s: not _down(n, s), {"per_token": True}),
    "per-token: q/k/v + ffn-in": (_current, {"per_token": True}),
}


def weight_matmuls(graph_model: Any) -> dict[str, tuple[int, ...]]:
    """Every MatMul with a 2-D initializer as its second input: name -> weight shape."""
    shapes = {init.name: tuple(init.dims) for init in graph_model.graph.initializer}
    found: dict[str, tuple[int, ...]] = {}
    for node in graph_model.graph.node:
        if node.op_type == "MatMul" and len(node.input) == 2:
            shape = shapes.get(node.input[1])
            if shape is not None and len(shape) == 2:
                found[node.name] = shape
    return found


def quantize(source: Path, target: Path, pick: Picker, options: dict[str, Any]) -> int:
    """Write the variant to `target` (once); returns how many weight MatMuls are int8."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    matmuls = weight_matmuls(onnx.load(str(source)))
    chosen = [name for name, shape in matmuls.items() if pick(name, shape)]
    if options.get("per_token") and not target.exists():
        quantize_per_token(
            source,
            target,
            pick,
            weight_bits=options.get("weight_bits", 8),
            sign=options.get("sign"),
            ops=options.get("ops"),
        )
    elif not target.exists():
        quantize_dynamic(
            str(source),
            str(target),
            op_types_to_quantize=["MatMul"],
            weight_type=QuantType.QInt8,
            nodes_to_quantize=chosen,
            **options,
        )
    return len(chosen)


def _cpu_ms(embedder: OnnxEmbedder, batches: list[list[str]]) -> tuple[float, float]:
    """(CPU ms per query, wall ms per batch) over `batches`."""
    cpu, wall = time.process_time(), time.perf_counter()
    for batch in batches:
        embedder.embed_queries(batch)
    queries = sum(len(b) for b in batches)
    return (
        (time.process_time() - cpu) * 1000 / queries,
        (time.perf_counter() - wall) * 1000 / len(batches),
    )


def _fidelity(
    embedder: OnnxEmbedder, questions: list[str], reference: np.ndarray, batches: list[list[int]]
) -> dict[str, float]:
    alone = np.vstack([embedder.embed_queries([q]) for q in questions])
    batched = np.empty_like(alone)
    for batch in batches:
        batched[batch] = embedder.embed_queries([questions[i] for i in batch])
    cos_alone = (alone * reference).sum(axis=1)
    cos_batched = (batched * reference).sum(axis=1)
    both = np.concatenate([cos_alone, cos_batched])
    return {
        "mean_alone": float(cos_alone.mean()),
        "min_alone": float(cos_alone.min()),
        "mean_batched": float(cos_batched.mean()),
        "min_batched": float(cos_batched.min()),
        "p1": float(np.percentile(both, 1)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--onnx-cache", default="")
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=DEFAULT_CACHE / "int8q" / "variants",
        help="quantised variants (default: %(default)s)",
    )
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--name", default="", help="suffix of the result files (--name=-avx2)")
    parser.add_argument("--variants", default="", help="names, '|'-separated (default: all)")
    args = parser.parse_args()
    model_dir = Path(default_model_path())
    fp32 = load_onnx_embedder(
        model_dir, cache_root(args.onnx_cache), ModelRuntime.ONNX, threads=args.threads
    )
    source_dir = variant_dir(model_dir, cache_root(args.onnx_cache))
    manifest = json.loads((source_dir / "manifest.json").read_text())
    tokenizer = load_tokenizer(source_dir / "tokenizer")
    spec = OnnxModelSpec(**manifest["spec"])
    args.work_dir.mkdir(parents=True, exist_ok=True)
    names = args.variants.split("|") if args.variants else list(VARIANTS)
    embedders: dict[str, OnnxEmbedder] = {"fp32": fp32}
    quantised: dict[str, int] = {"fp32": 0}
    for name in names:
        pick, options = VARIANTS[name]
        slug = hashlib.sha256(name.encode()).hexdigest()[:12]  # files never shift with the list
        target = args.work_dir / f"{source_dir.name}-{slug}.onnx"
        quantised[name] = quantize(source_dir / "model.onnx", target, pick, options)
        embedders[name] = OnnxEmbedder(
            target,
            tokenizer,
            spec,
            model_name=str(model_dir),
            runtime=ModelRuntime.ONNX_INT8,
            threads=args.threads,
        )
    questions = labelled_questions(args.sets.split(","))
    rng = random.Random(0)
    order = list(range(len(questions)))
    rng.shuffle(order)
    fidelity_batches = [order[i : i + FIDELITY_BATCH] for i in range(0, len(order), FIDELITY_BATCH)]
    reference = np.vstack([fp32.embed_queries([q]) for q in questions])
    fidelity = {
        name: _fidelity(e, questions, reference, fidelity_batches) for name, e in embedders.items()
    }
    cells = {
        size: [rng.sample(questions, size) for _ in range(BATCHES_PER_CELL[size])]
        for size in BATCH_SIZES
    }
    before = _uptime()
    samples: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for round_ in range(args.rounds):
        turn = list(embedders.items())
        if round_ % 2:
            turn.reverse()
        for size, batches in cells.items():
            for name, embedder in turn:
                samples.setdefault((name, size), []).append(_cpu_ms(embedder, batches))
    after = _uptime()
    rows = []
    for name in embedders:
        row: dict[str, Any] = {"variant": name, "int8_matmuls": quantised[name]}
        row |= {f"cosine_{k}": v for k, v in fidelity[name].items()}
        for size in BATCH_SIZES:
            times = samples[(name, size)]
            row[f"cpu_ms_b{size}"] = statistics.median(t[0] for t in times)
            row[f"wall_ms_b{size}"] = statistics.median(t[1] for t in times)
        rows.append(row)
    meta = {
        "run": datetime.now(UTC).isoformat(timespec="seconds"),
        "sets": args.sets,
        "questions": len(questions),
        "rounds": args.rounds,
        "threads": args.threads,
        "uptime_before": before,
        "uptime_after": after,
        "cpu_int8_flags": sorted(cpu_flags() & (EXACT_SIGNED_FLAGS | {"avx2", "avx512f"})),
        "exact_weight_sign": exact_weight_sign().value,
    }
    _write(meta, rows, args.name)


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _write(meta: dict[str, Any], rows: list[dict[str, Any]], name: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"int8_query_variants{name}.json").write_text(
        json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n"
    )
    fp32 = rows[0]
    lines = [
        "# int8 query model: quantisation recipes against fp32",
        "",
        f"Run {meta['run']}: {meta['questions']} real questions ({meta['sets']}); cosine to the "
        f"fp32 export's vector, each question alone and in random batches of {FIDELITY_BATCH}; "
        f"CPU ms per query and wall ms per batch at batch 1 / 4 / 8, median of {meta['rounds']} "
        f"rounds taking turns, {meta['threads']} intra-op thread(s). All weight MatMuls: 36 "
        f"(6 layers x q, k, v, attention out, ffn in, ffn out); int8 weights per output channel "
        f"unless said; activations uint8 per call.",
        f"Load before: `{meta['uptime_before']}`; after: `{meta['uptime_after']}`.",
        f"CPU: {platform.processor() or platform.machine()}, int8 flags "
        f"{', '.join(meta['cpu_int8_flags']) or 'none'}: per-token weights without a stated "
        f"sign are {meta['exact_weight_sign']} here (core.embed.int8_weights).",
        "",
        "| variant | int8 MatMuls | cosine mean (alone / batched) | cosine min (alone / batched) "
        "| 1st pct | CPU ms/q b1 / b4 / b8 | vs fp32 b1 / b4 / b8 | wall ms/batch b1 / b4 / b8 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cpu = " / ".join(f"{r[f'cpu_ms_b{s}']:.2f}" for s in BATCH_SIZES)
        ratio = " / ".join(f"{r[f'cpu_ms_b{s}'] / fp32[f'cpu_ms_b{s}']:.2f}" for s in BATCH_SIZES)
        wall = " / ".join(f"{r[f'wall_ms_b{s}']:.1f}" for s in BATCH_SIZES)
        lines.append(
            f"| {r['variant']} | {r['int8_matmuls']} | {r['cosine_mean_alone']:.5f} / "
            f"{r['cosine_mean_batched']:.5f} | {r['cosine_min_alone']:.4f} / "
            f"{r['cosine_min_batched']:.4f} | {r['cosine_p1']:.4f} | {cpu} | {ratio} | {wall} |"
        )
    text = "\n".join(lines) + "\n"
    (RESULTS / f"int8_query_variants{name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
