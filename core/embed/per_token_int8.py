"""Per-token int8 quantisation of an exported encoder's weight MatMuls (offline graph rewrite).

onnxruntime's dynamic quantisation gives each MatMul input one scale for the whole call, so a
token's int8 value, and with it a query's vector, depends on the other texts of its batch (the
micro-batcher's batches vary with the load). Here every token row gets its own symmetric scale
instead:

    s = max(|x|) / 127 over the row (one per token)      w_s = max(|W|) / 127 per output column
    x_q = round(x / s) + 128 (uint8, zero point 128)      W_q = round(W / w_s) (int8)
    y = MatMulInteger(x_q, W_q, 128) * s * w_s

With `WeightSign.UNSIGNED` the weights are stored as W_q + 128 (uint8, zero point 128): the same
integers, multiplied by onnxruntime's u8 x u8 kernels, which are exact on every CPU, where its u8
x s8 kernels saturate on x86 processors without VNNI (core.embed.int8_weights).

A token's result depends only on that token's activations, so a vector is the same alone and in
any batch (the int32 products are exact); the scales are finer than one per call, so the error is
smaller at the same int8 cost. `MatMulInteger` (u8 x s8, onnxruntime's fastest CPU path) takes one
zero point for its first input, so activations are shifted by a fixed 128 rather than given a zero
point each. MatMuls that read the same input (query, key and value) share one quantised copy of
it. Nothing here touches the network.

Two spellings of the same arithmetic (`QuantOps`): EXPLICIT writes the formula out in elementwise
operators (Div, Round, Add, Cast to quantise; Cast, Mul, Mul to dequantise), one pass over the
activations each. FUSED, the default, flattens the rows to 2-D and quantises them with one
per-axis `QuantizeLinear` (scale and zero point per row: the same division, round half to even
and shift) and dequantises the int32 products with one per-axis `DequantizeLinear` (the same
int32 -> float conversion times the row scale) before the column scales, then restores the
shape: the same float32 operations in the same order, so the two give identical bits (the tests
compare them), and FUSED takes 0.90x / 0.93x the CPU per query at 4 / 8 queries a batch, the
same alone (benchmarks/results/int8_query_variants-ops.md).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from core.embed.int8_weights import WeightSign, exact_weight_sign

Picker = Callable[[str, tuple[int, ...]], bool]
"""(MatMul node name, weight shape) -> quantise it?"""

_SCALE_FLOOR = 1e-12  # a row of zeros keeps a finite scale (its values quantise to 0)
FUSED_MIN_OPSET = 15  # Shape with start / end (per-axis Quantize/DequantizeLinear need 13)


class QuantOps(Enum):
    """How the graph spells the per-token arithmetic (module docstring): the same bits either way."""

    FUSED = "fused"
    EXPLICIT = "explicit"


def quantize_per_token(
    source: Path,
    target: Path,
    pick: Picker | None = None,
    *,
    weight_bits: int = 8,
    sign: WeightSign | None = None,
    ops: QuantOps | None = None,
) -> list[str]:
    """Write a copy of the ONNX model `source` to `target` whose weight MatMuls (those `pick`
    accepts; every one by default) run per-token int8; returns the names of the rewritten nodes
    (a benchmark's variants; the server's build is core.embed.onnx_export.quantize_int8).
    `weight_bits` 7 keeps weights within +-63, which rules out the int16 saturation of AVX2's
    u8 x s8 multiply-add on processors without VNNI (at some cost in weight precision);
    `sign` UNSIGNED rules it out without that cost (see the module docstring); None: the sign
    this CPU multiplies exactly (`exact_weight_sign`). `ops`: see `rewrite`."""
    import onnx

    graph_model = onnx.load(str(source))
    rewritten = rewrite(graph_model, pick, weight_bits, sign, ops)
    onnx.save(graph_model, str(target))
    return rewritten


def rewrite(
    graph_model: Any,
    pick: Picker | None = None,
    weight_bits: int = 8,
    sign: WeightSign | None = None,
    ops: QuantOps | None = None,
) -> list[str]:
    """Rewrite `graph_model` (an onnx ModelProto) in place; see `quantize_per_token`. `ops`:
    FUSED or EXPLICIT operators (module docstring); None: FUSED where the model's opset has
    them (15 and later), else EXPLICIT. ValueError for FUSED below opset 15."""
    from onnx import TensorProto, helper, numpy_helper

    unsigned = (sign or exact_weight_sign()) is WeightSign.UNSIGNED
    graph = graph_model.graph
    weights = {init.name: init for init in graph.initializer}
    opset = next(o.version for o in graph_model.opset_import if o.domain in ("", "ai.onnx"))
    if ops is None:
        ops = QuantOps.FUSED if opset >= FUSED_MIN_OPSET else QuantOps.EXPLICIT
    if ops is QuantOps.FUSED and opset < FUSED_MIN_OPSET:
        raise ValueError(
            f"fused per-token operators need opset {FUSED_MIN_OPSET} or later, the model has "
            f"{opset}: pass ops=QuantOps.EXPLICIT or export with a newer opset"
        )
    fused = ops is QuantOps.FUSED
    limit = float(2 ** (weight_bits - 1) - 1)
    constants: dict[str, np.ndarray] = {
        "pt8/inv127": np.array(1.0 / 127.0, np.float32),
        "pt8/floor": np.array(_SCALE_FLOOR, np.float32),
        "pt8/shift": np.array(128.0, np.float32),
        "pt8/zero_point": np.array(128, np.uint8),
        "pt8/flat": np.array([-1], np.int64),
    }
    quantised_inputs: dict[str, tuple[str, str]] = {}  # input -> (uint8 copy, row scales)
    nodes: list[Any] = []
    rewritten: list[str] = []
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" else None
        shape = tuple(weight.dims) if weight is not None else ()
        if weight is None or len(shape) != 2 or (pick and not pick(node.name, shape)):
            nodes.append(node)
            continue
        source = node.input[0]
        if source not in quantised_inputs:
            quantise = _quantise_rows_fused if fused else _quantise_rows
            quantised_inputs[source] = quantise(source, nodes, helper, TensorProto, opset)
        values, scales = quantised_inputs[source]
        base = f"pt8/{node.name or node.output[0]}"
        matrix = numpy_helper.to_array(weight).astype(np.float32)
        column_scale = np.maximum(np.abs(matrix).max(axis=0), _SCALE_FLOOR) / limit
        quantised = np.clip(np.round(matrix / column_scale), -limit, limit)
        constants[f"{base}/weight"] = (
            (quantised + 128.0).astype(np.uint8) if unsigned else quantised.astype(np.int8)
        )
        constants[f"{base}/weight_scale"] = column_scale.astype(np.float32)
        nodes.append(
            helper.make_node(
                "MatMulInteger",
                [values, f"{base}/weight", "pt8/zero_point"]
                + (["pt8/zero_point"] if unsigned else []),
                [f"{base}/int32"],
                name=f"{base}/MatMulInteger",
            )
        )
        if fused:  # 2-D products: dequantise per row, column scales, the input's leading shape
            constants[f"{base}/columns"] = np.array([shape[1]], np.int64)
            nodes += [
                helper.make_node(
                    "DequantizeLinear", [f"{base}/int32", scales], [f"{base}/rows"], axis=0
                ),
                helper.make_node("Mul", [f"{base}/rows", f"{base}/weight_scale"], [f"{base}/2d"]),
                helper.make_node(
                    "Concat", [f"{values}/lead", f"{base}/columns"], [f"{base}/shape"], axis=0
                ),
                helper.make_node(
                    "Reshape", [f"{base}/2d", f"{base}/shape"], [node.output[0]], name=base
                ),
            ]
        else:
            nodes += [
                helper.make_node(
                    "Cast", [f"{base}/int32"], [f"{base}/float"], to=TensorProto.FLOAT
                ),
                helper.make_node("Mul", [f"{base}/float", scales], [f"{base}/rows"]),
                helper.make_node(
                    "Mul", [f"{base}/rows", f"{base}/weight_scale"], [node.output[0]], name=base
                ),
            ]
        rewritten.append(node.name)
    used = {name for node in nodes for name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    graph.initializer.extend(
        numpy_helper.from_array(value, name) for name, value in constants.items() if name in used
    )
    del graph.node[:]
    graph.node.extend(nodes)
    return rewritten


def _row_scales(source: str, nodes: list[Any], helper: Any, types: Any, opset: int) -> str:
    """Append the nodes computing each row's scale, max(|row|) / 127 (at least the floor), with
    the last axis kept as 1; returns its name."""
    base = f"pt8/in/{source}"
    if opset >= 18:
        axes = f"{base}/axes"
        nodes.append(
            helper.make_node(
                "Constant",
                [],
                [axes],
                value=helper.make_tensor(axes, types.INT64, [1], [-1]),
            )
        )
        reduce_max = helper.make_node(
            "ReduceMax", [f"{base}/abs", axes], [f"{base}/max"], keepdims=1
        )
    else:
        reduce_max = helper.make_node(
            "ReduceMax", [f"{base}/abs"], [f"{base}/max"], axes=[-1], keepdims=1
        )
    nodes += [
        helper.make_node("Abs", [source], [f"{base}/abs"]),
        reduce_max,
        helper.make_node("Mul", [f"{base}/max", "pt8/inv127"], [f"{base}/raw_scale"]),
        helper.make_node("Max", [f"{base}/raw_scale", "pt8/floor"], [f"{base}/scale"]),
    ]
    return f"{base}/scale"


def _quantise_rows(
    source: str, nodes: list[Any], helper: Any, types: Any, opset: int
) -> tuple[str, str]:
    """Append the nodes that quantise `source` per row (last axis) in elementwise operators;
    (uint8 values, scales)."""
    base = f"pt8/in/{source}"
    scale = _row_scales(source, nodes, helper, types, opset)
    nodes += [
        helper.make_node("Div", [source, scale], [f"{base}/scaled"]),
        helper.make_node("Round", [f"{base}/scaled"], [f"{base}/rounded"]),
        helper.make_node("Add", [f"{base}/rounded", "pt8/shift"], [f"{base}/shifted"]),
        helper.make_node("Cast", [f"{base}/shifted"], [f"{base}/uint8"], to=types.UINT8),
    ]
    return f"{base}/uint8", scale


def _quantise_rows_fused(
    source: str, nodes: list[Any], helper: Any, types: Any, opset: int
) -> tuple[str, str]:
    """Append the nodes that flatten `source` to 2-D rows and quantise each row with one per-axis
    QuantizeLinear; (uint8 values, [rows] scales). `<values>/lead` names the input's shape
    without its last axis, for the products to be shaped back."""
    base = f"pt8/in/{source}"
    scale = _row_scales(source, nodes, helper, types, opset)
    values = f"{base}/uint8"
    nodes += [
        helper.make_node("Reshape", [scale, "pt8/flat"], [f"{base}/scales"]),
        helper.make_node("Shape", [f"{base}/scales"], [f"{base}/rows"]),
        helper.make_node("Expand", ["pt8/zero_point", f"{base}/rows"], [f"{base}/zero_points"]),
        helper.make_node("Shape", [source], [f"{values}/lead"], end=-1),
        helper.make_node("Shape", [source], [f"{base}/width"], start=-1),
        helper.make_node("Concat", ["pt8/flat", f"{base}/width"], [f"{base}/2d"], axis=0),
        helper.make_node("Reshape", [source, f"{base}/2d"], [f"{base}/flat"]),
        helper.make_node(
            "QuantizeLinear",
            [f"{base}/flat", f"{base}/scales", f"{base}/zero_points"],
            [values],
            axis=0,
        ),
    ]
    return values, f"{base}/scales"
