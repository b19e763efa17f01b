"""The fp32 export in onnxruntime's fused transformer operators (offline, once per build).

The TorchScript export spells every encoder layer in primitive operators: MiniLM-L6 keeps 338
nodes after onnxruntime's own session optimisations, half of them shape arithmetic (Shape,
Gather, Unsqueeze, Concat, Reshape) and the attention as MatMul / Softmax / Where / IsNaN.
onnxruntime's transformer optimizer (`onnxruntime.transformers.optimizer`, shipped in the
onnxruntime wheel; Python graph fusions only, no hardware-specific rewrite) turns a BERT-style
encoder exported with eager attention into 46 nodes: one `EmbedLayerNormalization`, and per
layer one `Attention` (the Q/K/V projections, scaled dot product and mask in one kernel), two
`SkipLayerNormalization` and one `BiasGelu` around the remaining MatMuls. The same fp32
arithmetic in fewer, larger kernels: cosine to torch 1.000000 on every passage of the indexer's
own calls, at 1.17-1.21x the unfused export's passage rate on 10-11 % less CPU with two threads
on a 2-core AMD EPYC (benchmarks/results/passage_runtimes-fused.md, four labelled sets).

Only the fusion that pays is kept: without a fused `Attention` (an export whose attention the
optimizer does not recognise, e.g. torch's scaled-dot-product pattern) the partly fused graph was
no faster in a quick check, so `fuse_encoder` reports it as not applied and the build serves the
plain export. The build verifies whichever file it serves against torch, as every variant.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from core.store.atomic_file import write_atomic

logger = logging.getLogger(__name__)

MODEL_TYPE = "bert"
"""The optimizer's fusion patterns: BERT-style encoders (BERT, MiniLM, RoBERTa-like layouts)."""


@dataclass(frozen=True, slots=True)
class Fusion:
    """What `fuse_encoder` did: whether `target` holds a graph worth serving, and why not."""

    applied: bool
    operators: dict[str, int]
    """Fused operators by type (the optimizer's statistics, zero counts left out)."""
    reason: str = ""


def fuse_encoder(source: Path, target: Path, num_heads: int, hidden_size: int) -> Fusion:
    """Write `source` (an fp32 encoder export) with its layers fused to `target` (atomically);
    `applied` is False, and nothing written, when no `Attention` was fused or the optimizer
    failed."""
    try:
        from onnxruntime.transformers.fusion_options import FusionOptions
        from onnxruntime.transformers.optimizer import optimize_model
    except ImportError as exc:  # an onnxruntime without its transformers tools
        return Fusion(False, {}, f"onnxruntime.transformers is unavailable ({exc})")
    _quiet_optimizer_loggers()
    try:
        optimized = optimize_model(
            str(source),
            model_type=MODEL_TYPE,
            num_heads=num_heads,
            hidden_size=hidden_size,
            optimization_options=FusionOptions(MODEL_TYPE),
            opt_level=0,  # the Python fusions only: no CPU-specific onnxruntime rewrite saved
            use_gpu=False,
        )
        counts = {
            name: int(count)
            for name, count in optimized.get_fused_operator_statistics().items()
            if count
        }
        if not counts.get("Attention"):
            return Fusion(False, counts, "no attention was fused")
        optimized.topological_sort()  # as the optimizer's own save does
        write_atomic(target, [optimized.model.SerializeToString()])
    except Exception as exc:  # noqa: BLE001 - any optimizer failure leaves the plain export
        logger.warning("fusing %s failed; serving the plain export", source, exc_info=True)
        return Fusion(False, {}, f"the optimizer failed: {type(exc).__name__}: {exc}")
    return Fusion(True, counts)


def _quiet_optimizer_loggers() -> None:
    """The optimizer's modules log every fusion at INFO under their bare module names
    (`fusion_base`, `onnx_model`, ...): kept to warnings, so a server's first start logs the
    build's one summary line (core.embed.onnx_build) rather than a page of them."""
    import onnxruntime.transformers as tools

    folder = os.path.dirname(os.path.abspath(tools.__file__))
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if "." not in name and os.path.dirname(os.path.abspath(path)) == folder:
            logging.getLogger(name).setLevel(logging.WARNING)
