"""Per-token int8 (core.embed.per_token_int8) against fp32 and against onnxruntime's dynamic
quantisation: close to fp32, and a row's result independent of the rows it is computed with."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.embed.int8_weights import WeightSign, exact_weight_sign
from core.embed.model_runtime import ModelRuntime
from core.embed.onnx_build import (
    cache_root,
    load_onnx_embedder,
    session_on,
    variant_dir,
    variant_file,
)
from core.embed.onnx_embedder import session_options
from core.embed.per_token_int8 import QuantOps, quantize_per_token, rewrite
from core.embed.sentence_transformer_embedder import default_model_path

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

K, N = 64, 48


def _graph(path: Path, weight: np.ndarray, bias: np.ndarray, opset: int = 17) -> None:
    """y = x @ weight + bias, then x @ x^T (an activation MatMul, which must stay fp32)."""
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", K])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", N])
    gram = helper.make_tensor_value_info(
        "gram", TensorProto.FLOAT, ["batch", "sequence", "sequence"]
    )
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="dense/MatMul"),
        helper.make_node("Add", ["xw", "b"], ["y"]),
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "xt"], ["gram"], name="scores/MatMul"),
    ]
    initializers = [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")]
    graph = helper.make_graph(nodes, "g", [x], [y, gram], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)
    onnx.save(model, str(path))


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(
        str(path), session_options(1), providers=["CPUExecutionProvider"]
    )
    return np.asarray(session.run(["y"], {"x": x})[0])


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(7)
    weight = rng.normal(0, 0.05, (K, N)).astype(np.float32)
    bias = rng.normal(0, 0.1, N).astype(np.float32)
    fp32 = tmp_path / "fp32.onnx"
    _graph(fp32, weight, bias)
    per_token = tmp_path / "per_token.onnx"
    assert quantize_per_token(fp32, per_token) == ["dense/MatMul"]  # not the activation MatMul
    from onnxruntime.quantization import QuantType, quantize_dynamic

    dynamic = tmp_path / "dynamic.onnx"
    quantize_dynamic(str(fp32), str(dynamic), weight_type=QuantType.QInt8, per_channel=True)
    return {"fp32": fp32, "per_token": per_token, "dynamic": dynamic}


def _batches() -> tuple[np.ndarray, np.ndarray]:
    """One text's rows alone, and the same rows beside a text of 50x larger activations."""
    rng = np.random.default_rng(11)
    alone = rng.normal(0, 1, (1, 5, K)).astype(np.float32)
    loud = rng.normal(0, 50, (1, 5, K)).astype(np.float32)
    return alone, np.concatenate([alone, loud])


def test_per_token_int8_is_close_to_fp32(files: dict[str, Path]) -> None:
    alone, batch = _batches()
    exact = _run(files["fp32"], batch)
    quantised = _run(files["per_token"], batch)
    error = np.abs(quantised - exact).max(axis=-1) / np.abs(exact).max(axis=-1)
    assert error.max() < 0.02, error


def test_a_row_does_not_depend_on_its_batch(files: dict[str, Path]) -> None:
    alone, batch = _batches()
    by_itself = _run(files["per_token"], alone)[0]
    beside_loud = _run(files["per_token"], batch)[0]
    np.testing.assert_array_equal(by_itself, beside_loud)
    # onnxruntime's dynamic quantisation shares one activation scale per call: the loud text
    # coarsens the quiet one's values, which is what the per-token rewrite is for
    dynamic_alone = _run(files["dynamic"], alone)[0]
    dynamic_beside = _run(files["dynamic"], batch)[0]
    exact = _run(files["fp32"], alone)[0]
    assert np.abs(dynamic_beside - exact).max() > 5 * np.abs(by_itself - exact).max()
    assert not np.array_equal(dynamic_alone, dynamic_beside)


def _exact_per_token(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The rewrite's arithmetic in NumPy with exact integer products (float32 scales as the graph
    computes them, round half to even like ONNX Round)."""
    scale = np.maximum(np.abs(x).max(axis=-1, keepdims=True) * np.float32(1 / 127), 1e-12)
    values = np.round(x / scale).astype(np.int64)
    column = np.maximum(np.abs(weight).max(axis=0), 1e-12) / np.float32(127)
    integers = np.clip(np.round(weight / column), -127, 127).astype(np.int64)
    products = (values @ integers).astype(np.float32)
    return (products * scale * column.astype(np.float32)).astype(np.float32)


def _saturating(tmp_path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A MatMul whose byte products overflow a 16-bit pair sum (AVX2's u8 x s8 multiply-add):
    activations near their row maximum (about 128 + 127 once shifted) times weights near their
    column maximum (127); the fp32 graph, its input and the exact per-token result."""
    rng = np.random.default_rng(5)
    weight = rng.uniform(0.9, 1.0, (K, N)).astype(np.float32)
    weight[:, ::2] *= -1  # both signs, every column saturated one way
    x = rng.uniform(0.85, 1.0, (2, 3, K)).astype(np.float32)
    _graph(tmp_path / "fp32.onnx", weight, np.zeros(N, np.float32))
    return weight, x, _exact_per_token(x, weight)


def test_unsigned_weights_give_the_exact_integer_products_on_any_cpu(tmp_path: Path) -> None:
    _, x, exact = _saturating(tmp_path)
    quantize_per_token(tmp_path / "fp32.onnx", tmp_path / "u8.onnx", sign=WeightSign.UNSIGNED)
    model = onnx.load(str(tmp_path / "u8.onnx"))
    weights = [i for i in model.graph.initializer if i.name.endswith("/weight")]
    assert [w.data_type for w in weights] == [onnx.TensorProto.UINT8]
    np.testing.assert_allclose(_run(tmp_path / "u8.onnx", x), exact, rtol=1e-5, atol=1e-3)


def test_the_sign_chosen_for_this_cpu_is_exact_here(tmp_path: Path) -> None:
    """Signed weights where VNNI sums byte products in 32 bits, unsigned elsewhere: whichever
    this host gets must reproduce the exact products (signed weights on an AVX2-only CPU clip
    these by up to half)."""
    _, x, exact = _saturating(tmp_path)
    chosen = exact_weight_sign()
    quantize_per_token(tmp_path / "fp32.onnx", tmp_path / "chosen.onnx", sign=chosen)
    np.testing.assert_allclose(_run(tmp_path / "chosen.onnx", x), exact, rtol=1e-5, atol=1e-3)


def test_opset_18_takes_the_reduction_axes_as_an_input(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    weight = rng.normal(0, 0.05, (K, N)).astype(np.float32)
    bias = np.zeros(N, np.float32)
    _graph(tmp_path / "fp32.onnx", weight, bias, opset=18)
    quantize_per_token(tmp_path / "fp32.onnx", tmp_path / "int8.onnx")
    alone, batch = _batches()
    exact = _run(tmp_path / "fp32.onnx", batch)
    error = np.abs(_run(tmp_path / "int8.onnx", batch) - exact).max() / np.abs(exact).max()
    assert error < 0.02


def test_pick_limits_the_rewrite_and_the_graph_keeps_its_outputs(files: dict[str, Path]) -> None:
    model = onnx.load(str(files["fp32"]))
    assert rewrite(model, lambda name, shape: name != "dense/MatMul") == []
    assert [node.op_type for node in model.graph.node].count("MatMulInteger") == 0
    model = onnx.load(str(files["fp32"]))
    assert rewrite(model) == ["dense/MatMul"]
    onnx.checker.check_model(model)
    types = [node.op_type for node in model.graph.node]
    assert types.count("MatMulInteger") == 1 and types.count("MatMul") == 1
    assert "w" not in {init.name for init in model.graph.initializer}  # fp32 weight dropped


def test_the_int8_model_embeds_a_query_the_same_alone_and_in_any_batch() -> None:
    """The served int8 build: a question's vector alone and inside batches of other questions
    (of other lengths, so padded) agree to float noise, where dynamic quantisation moved them."""
    int8 = load_onnx_embedder(Path(default_model_path()), cache_root(), ModelRuntime.ONNX_INT8)
    fp32 = load_onnx_embedder(Path(default_model_path()), cache_root(), ModelRuntime.ONNX)
    questions = [
        "How do I reverse a list?",
        "why does my multithreaded program not use all cores when it runs numpy code",
        "gil",
        "What is the difference between a process and a thread in CPython's runtime?",
    ]
    alone = np.vstack([int8.embed_queries([q]) for q in questions])
    together = int8.embed_queries(questions)
    reordered = int8.embed_queries(questions[::-1])[::-1]
    assert (alone * together).sum(axis=1).min() > 0.99999
    assert (alone * reordered).sum(axis=1).min() > 0.99999
    cosine_to_fp32 = (alone * fp32.embed_queries(questions)).sum(axis=1)
    assert 0.99 < cosine_to_fp32.min() < 0.99999, cosine_to_fp32  # int8, close to fp32


@pytest.mark.parametrize("sign", list(WeightSign))
def test_fused_operators_give_the_explicit_formula_bit_for_bit(
    tmp_path: Path, sign: WeightSign
) -> None:
    """The per-axis Quantize/DequantizeLinear spelling against the elementwise reference: the
    same bits for every row, of a 3-D batch and of one text, and the graph's shapes kept."""
    rng = np.random.default_rng(13)
    weight = rng.normal(0, 0.05, (K, N)).astype(np.float32)
    _graph(tmp_path / "fp32.onnx", weight, rng.normal(0, 0.1, N).astype(np.float32))
    for ops in QuantOps:
        quantize_per_token(
            tmp_path / "fp32.onnx", tmp_path / f"{ops.value}.onnx", sign=sign, ops=ops
        )
    types = [n.op_type for n in onnx.load(str(tmp_path / "fused.onnx")).graph.node]
    assert "QuantizeLinear" in types and "DequantizeLinear" in types and "Div" not in types
    alone, batch = _batches()
    zeros = np.zeros((1, 3, K), np.float32)  # a row of zeros: the scale floor, no NaN
    for x in (alone, batch, zeros, rng.normal(0, 3, (3, 7, K)).astype(np.float32)):
        explicit, fused = _run(tmp_path / "explicit.onnx", x), _run(tmp_path / "fused.onnx", x)
        assert fused.shape == explicit.shape == (*x.shape[:-1], N)
        np.testing.assert_array_equal(fused, explicit)
        assert np.isfinite(fused).all()


def test_fused_operators_need_opset_15_and_the_default_falls_back(tmp_path: Path) -> None:
    rng = np.random.default_rng(17)
    weight = rng.normal(0, 0.05, (K, N)).astype(np.float32)
    _graph(tmp_path / "fp32.onnx", weight, np.zeros(N, np.float32), opset=13)
    with pytest.raises(ValueError, match="opset 15 or later.*QuantOps.EXPLICIT"):
        quantize_per_token(tmp_path / "fp32.onnx", tmp_path / "f.onnx", ops=QuantOps.FUSED)
    assert quantize_per_token(tmp_path / "fp32.onnx", tmp_path / "d.onnx") == ["dense/MatMul"]
    types = [n.op_type for n in onnx.load(str(tmp_path / "d.onnx")).graph.node]
    assert "QuantizeLinear" not in types and "Div" in types  # the explicit spelling
    alone, batch = _batches()
    exact = _run(tmp_path / "fp32.onnx", batch)
    error = np.abs(_run(tmp_path / "d.onnx", batch) - exact).max() / np.abs(exact).max()
    assert error < 0.02


def test_the_served_int8_build_is_fused_and_embeds_as_the_explicit_formula(
    tmp_path: Path,
) -> None:
    """The real model: the build `model.runtime = "onnx-int8"` serves uses the fused operators,
    and its vectors are bit for bit those of the elementwise spelling of the same export."""
    model_dir = Path(default_model_path())
    served = load_onnx_embedder(model_dir, cache_root(), ModelRuntime.ONNX_INT8, threads=1)
    directory = variant_dir(model_dir, cache_root())
    served_file = directory / variant_file(ModelRuntime.ONNX_INT8)
    assert "QuantizeLinear" in {n.op_type for n in onnx.load(str(served_file)).graph.node}
    explicit_file = tmp_path / "explicit.onnx"
    quantize_per_token(directory / "model.onnx", explicit_file, ops=QuantOps.EXPLICIT)
    explicit = session_on(
        directory, explicit_file, ModelRuntime.ONNX_INT8, model_name=str(model_dir), threads=1
    )
    questions = ["How do I reverse a list?", "gil", "why is my program slow " * 20]
    np.testing.assert_array_equal(
        served.embed_queries(questions), explicit.embed_queries(questions)
    )
    np.testing.assert_array_equal(
        served.embed_queries(questions[:1]), explicit.embed_queries(questions[:1])
    )
