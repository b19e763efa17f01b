"""Export a sentence-transformers model's encoder to ONNX and quantise it to int8 (offline).

`export_encoder` traces the Hugging Face encoder (`input_ids`, `attention_mask` and, when the
tokenizer makes them, `token_type_ids` -> `last_hidden_state`) with `torch.onnx.export`'s
TorchScript exporter, batch and sequence axes dynamic; pooling and normalisation stay outside the
graph (NumPy, in core.embed.onnx_embedder). `quantize_int8` rewrites every weight MatMul to
per-token int8 (core.embed.per_token_int8: a scale per token row, int8 weights per output
column, signed or unsigned as the CPU computes them exactly: core.embed.int8_weights), so a
text's vector does not depend on the batch it is embedded in. On all-MiniLM-L6-v2
against torch it reaches cosine 0.9960 on the worst verification text (onnxruntime's dynamic
quantisation, one activation scale per call, reached 0.9956 with the feed-forward output and
attention output projections left in fp32, and 0.987 with every MatMul quantised); on 543 real
questions about half fp32's CPU per query (benchmarks/results/int8_query_variants.md).

Both write to `target` through a temporary file in its directory and a rename, so a reader
never sees half a file. Nothing here touches the network.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from core.embed.int8_weights import WeightSign

EXPORT_OPSET = 17
_TRACE_TEXTS = ("short", "a longer sample text, so that the first one is padded")


def export_encoder(model: Any, target: Path, *, eager_attention: bool = False) -> None:
    """Write the encoder of `model` (a SentenceTransformer on the CPU, fp32, modules
    Transformer -> Pooling ...) to `target` as ONNX. `eager_attention`: trace the attention as
    transformers' eager implementation (matmul, softmax) instead of the model's own (SDPA by
    default), the pattern onnxruntime's transformer optimizer fuses (core.embed.onnx_fusion);
    the model is left as it was."""
    hf_model = model[0].auto_model
    sample = model.tokenizer(list(_TRACE_TEXTS), padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]
    encoder = _Encoder(hf_model, names).eval()
    axes = {name: {0: "batch", 1: "sequence"} for name in [*names, "last_hidden_state"]}
    with (
        _attention(hf_model, "eager" if eager_attention else None),
        _written_atomically(target) as temporary,
        torch.no_grad(),
        warnings.catch_warnings(),
    ):
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


def quantize_int8(source: Path, target: Path, sign: WeightSign) -> list[str]:
    """Write a copy of `source` whose weight MatMuls run per-token int8 (core.embed.per_token_int8)
    with `sign` weights to `target`; returns the names of the MatMuls it quantised (every one with
    a 2-D weight)."""
    from core.embed.per_token_int8 import quantize_per_token

    with _written_atomically(target) as temporary:
        return quantize_per_token(source, temporary, sign=sign)


@contextmanager
def _attention(hf_model: Any, implementation: str | None) -> Iterator[None]:
    """`hf_model` with its attention implementation set to `implementation` (None: unchanged)
    for the block, then restored; unchanged too when the model cannot switch it."""
    config = getattr(hf_model, "config", None)
    before = getattr(config, "_attn_implementation", None)
    switch = getattr(hf_model, "set_attn_implementation", None)
    if implementation is None or before is None or switch is None or before == implementation:
        yield
        return
    switch(implementation)
    try:
        yield
    finally:
        switch(before)


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
