"""Export a sentence-transformers model's encoder to ONNX and quantise it to int8 (offline).

`export_encoder` traces the Hugging Face encoder (`input_ids`, `attention_mask` and, when the
tokenizer makes them, `token_type_ids` -> `last_hidden_state`) with `torch.onnx.export`'s
TorchScript exporter, batch and sequence axes dynamic; pooling and normalisation stay outside the
graph (NumPy, in core.embed.onnx_embedder). `quantize_int8` applies onnxruntime's dynamic
quantisation: int8 weights per output channel on the query/key/value and feed-forward input
projections; the down-projections (more inputs than outputs: BERT's feed-forward output) and the
attention output projections keep fp32. Measured on all-MiniLM-L6-v2 against torch (worst text of
the verification set): every MatMul per tensor 0.92 (a 256-token passage), per channel 0.987,
per channel without the down-projections 0.988 (a passage embedded alone; activation scales are
per batch), also without the attention outputs 0.996.

Both write to `target` through a temporary file in its directory and a rename, so a reader
never sees half a file. Nothing here touches the network.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path
from typing import Any

import torch

EXPORT_OPSET = 17
_TRACE_TEXTS = ("short", "a longer sample text, so that the first one is padded")


def export_encoder(model: Any, target: Path) -> None:
    """Write the encoder of `model` (a SentenceTransformer on the CPU, fp32, modules
    Transformer -> Pooling ...) to `target` as ONNX."""
    hf_model = model[0].auto_model
    sample = model.tokenizer(list(_TRACE_TEXTS), padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]
    encoder = _Encoder(hf_model, names).eval()
    axes = {name: {0: "batch", 1: "sequence"} for name in [*names, "last_hidden_state"]}
    with _written_atomically(target) as temporary, torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about shape-dependent Python branches
        torch.onnx.export(
            encoder,
            tuple(sample[name] for name in names),
            str(temporary),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=EXPORT_OPSET,
            do_constant_folding=True,
            dynamo=False,
        )


def quantize_int8(source: Path, target: Path) -> list[str]:
    """Write an int8 dynamically quantised copy of `source` to `target`; returns the weight
    MatMuls left in fp32 (`fp32_matmuls`)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    kept_fp32 = fp32_matmuls(onnx.load(str(source)))
    quantizer_log = logging.getLogger()  # quantize_dynamic advises pre-processing on the root
    level = quantizer_log.level
    quantizer_log.setLevel(logging.ERROR)
    try:
        with _written_atomically(target) as temporary:
            quantize_dynamic(
                str(source),
                str(temporary),
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                weight_type=QuantType.QInt8,
                nodes_to_exclude=kept_fp32,
            )
    finally:
        quantizer_log.setLevel(level)
    return kept_fp32


def fp32_matmuls(graph_model: Any) -> list[str]:
    """Names of the weight MatMuls quantisation leaves alone: down-projections (a (k, n) weight
    with k > n) and attention output projections (named `.../attention/output/...` by the
    Hugging Face BERT family; other models keep only the down-projections)."""
    shapes = {init.name: tuple(init.dims) for init in graph_model.graph.initializer}
    names: list[str] = []
    for node in graph_model.graph.node:
        if node.op_type != "MatMul" or len(node.input) < 2:
            continue
        shape = shapes.get(node.input[1])
        if shape is None or len(shape) != 2:
            continue
        if shape[0] > shape[1] or "/attention/output/" in node.name:
            names.append(node.name)
    return names


class _Encoder(torch.nn.Module):
    """The Hugging Face model called with named inputs, returning `last_hidden_state`."""

    def __init__(self, hf_model: torch.nn.Module, names: list[str]) -> None:
        super().__init__()
        self.hf_model = hf_model
        self.names = names

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        output = self.hf_model(**dict(zip(self.names, inputs, strict=True)))
        hidden: torch.Tensor = output.last_hidden_state
        return hidden


class _written_atomically:
    """A temporary path beside `target`, renamed onto it when the block succeeds."""

    def __init__(self, target: Path) -> None:
        self._target = target
        self._temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")

    def __enter__(self) -> Path:
        self._target.parent.mkdir(parents=True, exist_ok=True)
        return self._temporary

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            with open(self._temporary, "rb") as written:
                os.fsync(written.fileno())
            os.replace(self._temporary, self._target)
        else:
            self._temporary.unlink(missing_ok=True)
