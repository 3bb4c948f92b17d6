"""ONNX in: small models built with onnx.helper match onnxruntime on every device; the
old opsets' forms (broadcast, is_test, initializers as inputs, attributes that became
inputs) import; shape subgraphs fold at import; bad models give one clear error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto

import irtensor.onnx as ionnx
from conftest import DEVICES, device_param
from irtensor.onnx.backend import IrtensorBackend
from onnx_models import (
    Case,
    const,
    conv_net,
    make,
    matches_onnxruntime,
    n,
    onnxruntime_outputs,
    rand,
)

ort = pytest.importorskip("onnxruntime")

reference = onnxruntime_outputs


def pools() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    nodes = [n("AveragePool", ["x"], ["a"], kernel_shape=[3, 3], strides=[2, 2],
               pads=[1, 1, 1, 1], ceil_mode=1),
             n("AveragePool", ["x"], ["b"], kernel_shape=[2, 2], strides=[2, 2],
               pads=[1, 0, 1, 0], count_include_pad=1),
             n("MaxPool", ["x"], ["c"], kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1),
             n("LRN", ["x"], ["d"], size=3, alpha=1e-2, beta=0.75, bias=2.0),
             n("LpPool", ["x"], ["e"], kernel_shape=[2, 3], strides=[1, 2],
               pads=[1, 1, 0, 1], p=3),
             n("LpPool", ["x"], ["f"], kernel_shape=[3, 3], auto_pad="SAME_UPPER")]
    return make(nodes, {"x": (1, 4, 7, 7)}, {}, ["a", "b", "c", "d", "e", "f"], opset=12), {
        "x": rand(1, 4, 7, 7)}


def shape_folding() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """torch's flatten: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, all at import."""
    nodes = [n("Shape", ["x"], ["s"]), const("zero", 0),
             n("Gather", ["s", "zero"], ["batch"], axis=0), const("ax", [0]),
             n("Unsqueeze", ["batch", "ax"], ["b1"]), const("minus1", [-1]),
             n("Concat", ["b1", "minus1"], ["shape"], axis=0),
             n("Reshape", ["x", "shape"], ["flat"]),
             n("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]), const("keep", [0, -1, 3]),
             n("Reshape", ["t", "keep"], ["r"]),
             const("st", [1]), const("en", [100]), const("axs", [2]), const("sp", [2]),
             n("Slice", ["r", "st", "en", "axs", "sp"], ["sl"]),
             const("sq", [0]), n("Unsqueeze", ["sl", "sq"], ["u"]),
             n("Squeeze", ["u", "sq"], ["y"])]
    return make(nodes, {"x": (2, 3, 4, 3)}, {}, ["flat", "y"], opset=13), {
        "x": rand(2, 3, 4, 3)}


def legacy_opset6() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Opset 6: Add's broadcast/axis, Gemm's broadcast, BatchNormalization's is_test and
    spatial, initializers listed as graph inputs, Softmax flattening at axis."""
    nodes = [n("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[0, 0, 0, 0]),
             n("Add", ["c", "b"], ["cb"], broadcast=1, axis=1),
             n("BatchNormalization", ["cb", "g", "beta", "mean", "var"], ["bn"], is_test=1,
               spatial=1, epsilon=1e-5),
             n("Softmax", ["bn"], ["sm"], axis=2),
             const("shape", [2, -1]), n("Reshape", ["sm", "shape"], ["f"]),
             n("Gemm", ["f", "wf", "bf"], ["y"], broadcast=1, transB=1),
             n("Dropout", ["y"], ["yd"], is_test=1, ratio=0.3)]
    weights = {"w": rand(4, 3, 3, 3), "b": rand(4), "g": rand(4), "beta": rand(4),
               "mean": rand(4), "var": rand(4, low=0.2), "wf": rand(5, 4 * 3 * 3),
               "bf": rand(5)}
    return make(nodes, {"x": (2, 3, 5, 5)}, weights, ["yd"], opset=6,
                weights_as_inputs=True), {"x": rand(2, 3, 5, 5)}


def movement() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    nodes = [n("Split", ["x"], ["s0", "s1"], axis=1, split=[1, 3]),
             n("Concat", ["s1", "s0"], ["c"], axis=1),
             n("Pad", ["c"], ["p"], pads=[0, 0, 1, 2, 0, 0, 2, 1], value=0.5),
             n("Pad", ["c"], ["e"], pads=[0, 0, 1, 2, 0, 0, 2, 1], mode="reflect"),
             n("Clip", ["p"], ["cl"], min=-0.5, max=0.25),
             n("Slice", ["e"], ["sl"], starts=[-1, 0], ends=[-100, 3], axes=[3, 1]),
             n("ReduceMean", ["sl"], ["rm"], axes=[2], keepdims=1),
             n("ReduceSum", ["cl"], ["rs"], axes=[1, 3], keepdims=0),
             n("Sum", ["x", "x", "x"], ["sum3"]),
             n("Sigmoid", ["sum3"], ["sg"]), n("Tanh", ["sg"], ["th"]),
             n("Elu", ["th"], ["el"], alpha=0.7), n("Selu", ["el"], ["se"]),
             n("Softplus", ["se"], ["sp"]), n("Pow", ["sp", "two"], ["pw"]),
             n("Div", ["pw", "x"], ["dv"]), n("Sub", ["dv", "x"], ["sb"]),
             n("Mul", ["sb", "x"], ["ml"]), n("Unsqueeze", ["ml"], ["us"], axes=[0]),
             n("LogSoftmax", ["us"], ["ls"], axis=2)]
    return make(nodes, {"x": (2, 4, 3, 5)}, {"two": np.array(2.0, np.float32)},
                ["p", "e", "cl", "sl", "rm", "rs", "ls"], opset=9), {
        "x": rand(2, 4, 3, 5, low=0.5, high=2.0)}


def opset13_inputs() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Attributes that became inputs: Clip (11), Pad (11), Squeeze/Unsqueeze/Split (13)."""
    nodes = [const("lo", np.array(-0.2, np.float32)), const("hi", np.array(0.3, np.float32)),
             n("Clip", ["x", "lo", "hi"], ["cl"]), const("pads", [0, 1, 0, 0, 1, 0]),
             n("Pad", ["cl", "pads"], ["p"]), const("split", [2, 3]),
             n("Split", ["p", "split"], ["a", "b"], axis=2), const("ax", [1]),
             n("Unsqueeze", ["a", "ax"], ["u"]), n("Squeeze", ["u", "ax"], ["sq"]),
             n("MatMul", ["b", "m"], ["mm"]), n("Max", ["sq", "sq"], ["mx"]),
             n("ReduceMax", ["mm"], ["rmax"], keepdims=0)]
    return make(nodes, {"x": (2, 3, 5)}, {"m": rand(3, 4)}, ["mx", "mm", "rmax"],
                opset=13), {"x": rand(2, 3, 5)}


def conv_transpose() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    nodes = [n("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], pads=[1, 0, 1, 1],
               output_padding=[1, 0]),
             n("Conv", ["x1", "w1"], ["c1"], strides=[2], pads=[1, 2]),
             # pads from output_shape (smaller and larger than the natural size), auto_pad
             n("ConvTranspose", ["x", "w"], ["os"], strides=[2, 3], output_shape=[10, 19]),
             n("ConvTranspose", ["x", "w"], ["ob"], strides=[2, 2], dilations=[1, 2],
               output_shape=[12, 15]),
             n("ConvTranspose", ["x", "w"], ["su"], strides=[2, 3], auto_pad="SAME_UPPER"),
             n("ConvTranspose", ["x", "w"], ["sl"], strides=[3, 2], auto_pad="SAME_LOWER"),
             n("CenterCropPad", ["x", "crop"], ["cp"], axes=[-1, 1])]
    return make(nodes, {"x": (1, 4, 5, 6), "x1": (2, 3, 9)},
                {"w": rand(4, 3, 3, 3), "b": rand(3), "w1": rand(5, 3, 3),
                 "crop": np.array([3, 7], np.int64)},
                ["y", "c1", "os", "ob", "su", "sl", "cp"], opset=18), \
        {"x": rand(1, 4, 5, 6), "x1": rand(2, 3, 9)}


def resizes() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Resize as segmentation and detection models use it: nearest x2 (asymmetric,
    floor), bilinear with half_pixel and align_corners, bicubic down, Upsample-9."""
    f32 = np.float32
    nodes = [const("roi", np.zeros(0, f32)), const("s2", np.array([1, 1, 2, 2], f32)),
             const("sd", np.array([1, 1, 0.6, 0.75], f32)), const("sz", [1, 3, 7, 5]),
             n("Resize", ["x", "roi", "s2"], ["near"], mode="nearest",
               coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
             n("Resize", ["x", "roi", "s2"], ["lin"], mode="linear"),
             n("Resize", ["x", "", "", "sz"], ["ac"], mode="linear",
               coordinate_transformation_mode="align_corners"),
             n("Resize", ["x", "roi", "sd"], ["cub"], mode="cubic")]
    return make(nodes, {"x": (1, 3, 5, 4)}, {}, ["near", "lin", "ac", "cub"], opset=13), \
        {"x": rand(1, 3, 5, 4)}


def losses_scans_norms() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The loss operators (ignore_index, class weights, the log_prob output), an exclusive
    reverse CumSum, Einsum, LayerNormalization with its Mean and InvStdDev, Shrink."""
    nodes = [n("Einsum", ["a", "b"], ["e"], equation="ij,jk->ik"),
             n("SoftmaxCrossEntropyLoss", ["e", "labels"], ["loss", "log_prob"],
               ignore_index=1),
             n("NegativeLogLikelihoodLoss", ["log_prob", "labels", "w"], ["nll"],
               reduction="sum"),
             const("axis", [1]), n("CumSum", ["a", "axis"], ["cs"], exclusive=1, reverse=1),
             n("LayerNormalization", ["a", "scale", "bias"], ["ln", "mean", "inv"], axis=-1),
             n("Shrink", ["a"], ["sh"], bias=0.1, lambd=0.3)]
    weights = {"b": rand(5, 3), "labels": np.array([0, 2, 1, 2], np.int64), "w": rand(3),
               "scale": rand(5), "bias": rand(5)}
    return make(nodes, {"a": (4, 5)}, weights,
                ["loss", "log_prob", "nll", "cs", "ln", "mean", "inv", "sh"], opset=18), {
        "a": rand(4, 5)}


def indexing() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """TopK (smallest, along axis 0), OneHot (negative indices, an axis), ScatterElements
    (max, negative indices), ScatterND (add, repeated rows), LpNormalization (p=1)."""
    nodes = [const("k", [2]), n("TopK", ["a", "k"], ["tv", "ti"], axis=0, largest=0),
             n("OneHot", ["hot_i", "depth", "hot_v"], ["oh"], axis=1),
             n("ScatterElements", ["a", "se_i", "se_u"], ["se"], axis=1, reduction="max"),
             n("ScatterND", ["a", "nd_i", "nd_u"], ["nd"], reduction="add"),
             n("LpNormalization", ["a"], ["lp"], axis=0, p=1)]
    weights = {"hot_i": np.array([[0, -1], [2, 1]], np.int64),
               "depth": np.array(3, np.int64), "hot_v": np.array([-0.5, 2.0], np.float32),
               "se_i": np.array([[0, -1], [2, 2], [4, 1], [3, 0]], np.int64),
               "se_u": rand(4, 2), "nd_i": np.array([[1], [3], [1]], np.int64),
               "nd_u": rand(3, 5)}
    return make(nodes, {"a": (4, 5)}, weights, ["tv", "ti", "oh", "se", "nd", "lp"],
                opset=18, output_types={"ti": TensorProto.INT64}), {"a": rand(4, 5)}


def pad_by_a_run_time_value() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Pad whose value is a graph input (an attention mask's -inf): the inside is kept,
    not turned into NaN by 0 * inf."""
    nodes = [const("pads", [0, 2, 1, 0]), const("axes", [-1, 0]),
             n("Pad", ["x", "pads", "v", "axes"], ["y"])]
    return make(nodes, {"x": (2, 3), "v": ()}, {}, ["y"], opset=18), {
        "x": rand(2, 3), "v": np.array(-np.inf, np.float32)}


CASES: dict[str, Case] = {
    "pad_by_a_run_time_value": pad_by_a_run_time_value,
    "indexing": indexing,
    "losses_scans_norms": losses_scans_norms,
    "resize": resizes,
    "conv_net_opset13": lambda: conv_net(13), "conv_net_opset9": lambda: conv_net(9),
    "pools": pools,
    "shape_folding": shape_folding,
    "movement": movement, "opset13_inputs": opset13_inputs, "conv_transpose": conv_transpose,
}


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
@pytest.mark.parametrize("case", sorted(CASES))
def test_small_models_match_onnxruntime(case: str, device: str) -> None:
    matches_onnxruntime(CASES[case], device)


def legacy_reference(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """What the opset-6 model computes, in numpy (onnxruntime runs no opset-6 Add)."""
    w = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
    c = np.einsum("nchwij,ocij->nohw", windows, w["w"]) + w["b"].reshape(1, -1, 1, 1)
    per = [v.reshape(1, -1, 1, 1) for v in (w["g"], w["beta"], w["mean"], w["var"])]
    bn = (c - per[2]) / np.sqrt(per[3] + 1e-5) * per[0] + per[1]
    flat = bn.reshape(2 * 4, 9)  # softmax at axis 2 of (2, 4, 3, 3): over 3 * 3
    sm = np.exp(flat - flat.max(1, keepdims=True))
    sm = (sm / sm.sum(1, keepdims=True)).reshape(2, -1)
    return sm @ w["wf"].T + w["bf"]


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
def test_opset6_forms_import(device: str) -> None:
    model, feeds = legacy_opset6()
    assert {i.name for i in model.graph.input} >= {"w", "wf"}  # initializers as inputs
    (got,) = ionnx.run(model, feeds, device=device)
    want = legacy_reference(model, feeds["x"].astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_shape_subgraphs_fold_at_import() -> None:
    """No Shape, Gather or Concat reaches the hl module: only the two reshapes' data."""
    model, _ = shape_folding()
    text = str(ionnx.load(model))
    assert "hl.concat" not in text and "hl.reshape" in text and "hl.permute" in text


def test_load_keeps_onnx_names_and_prints_hl_that_parses() -> None:
    from irtensor import ir

    model, _ = conv_net(13)
    module = ionnx.load(model)
    text = ir.to_text(module)
    assert "func.func @main(%x: tensor<2x3x10x10xf32>, %w1: tensor<8x3x3x3xf32>" in text
    assert "hl.conv2d" in text and "%logits" in text
    assert ir.to_text(ir.parse(text)) == text


def test_a_program_runs_again_with_new_inputs() -> None:
    model, _ = conv_net(13)
    program = ionnx.Program(model, "llvm")
    for seed in range(2):
        x = np.random.default_rng(seed).random((2, 3, 10, 10), np.float32)
        (got,) = program.run([x])
        (want,) = reference(model, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_program_keeps_what_its_weights_alone_give() -> None:
    """The weights are the program's own: read-only, and the kernels that read nothing
    else (a wide conv's channels-last weight copy, the batch norm's folded scale) run on
    the first call only; later calls with new inputs still match onnxruntime."""
    from irtensor import runtime

    model, _ = conv_net(13)
    model.graph.initializer[0].CopyFrom(onnx.numpy_helper.from_array(rand(64, 3, 3, 3), "w1"))
    for name in ("b1", "g", "beta", "mean", "var"):
        init = next(i for i in model.graph.initializer if i.name == name)
        low = 0.5 if name == "g" else 0.1 if name == "var" else 0.0
        init.CopyFrom(onnx.numpy_helper.from_array(rand(64, low=low), name))
    w2 = next(i for i in model.graph.initializer if i.name == "w2")
    w2.CopyFrom(onnx.numpy_helper.from_array(rand(6, 32, 3, 3), "w2"))
    program = ionnx.Program(model, "llvm")
    assert program.constant and not any(program.arrays[i].flags.writeable
                                        for i in program.constant)
    counts = []
    for seed in range(3):
        x = np.random.default_rng(seed).random((2, 3, 10, 10), np.float32)
        before = runtime.STATS.kernels_run
        (got,) = program.run([x])
        counts.append(runtime.STATS.kernels_run - before)
        (want,) = reference(model, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert counts[1] == counts[2] < counts[0]


def test_a_scalar_weight_keeps_a_scalar_result_scalar() -> None:
    """A 0-d initializer is a 0-d tensor: min(x) / 255 has shape (), not (1,)."""
    model = make([n("ReduceMin", ["x"], ["m"], keepdims=0), n("Div", ["m", "q"], ["y"])],
                 {"x": (6,)}, {"q": np.array(255.0, np.float32)}, ["y"])
    (y,) = ionnx.run(model, {"x": np.arange(1, 7, dtype=np.float32)}, device="interp")
    assert y.shape == ()
    assert y == np.float32(1.0) / np.float32(255.0)


def test_the_backend_prepares_once_and_runs() -> None:
    model, feeds = conv_net(13)
    assert IrtensorBackend.supports_device("CPU") and not IrtensorBackend.supports_device("CUDA")
    rep = IrtensorBackend.prepare(model, "CPU")
    (got,) = rep.run([feeds["x"]])
    (want,) = reference(model, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    node = onnx.helper.make_node("Relu", ["a"], ["b"])
    a = rand(3, 4)
    (relu,) = IrtensorBackend.run_node(node, [a])
    np.testing.assert_array_equal(relu, np.maximum(a, 0))


# ---------------------------------------------------------------------- bad input

def unsupported_model() -> onnx.ModelProto:
    nodes = [n("Relu", ["x"], ["r"]),
             onnx.helper.make_node("NonMaxSuppression", ["r", "r"], ["y"], name="nms_7")]
    return make(nodes, {"x": (1, 4, 4)}, {}, ["y"], opset=13,
                output_types={"y": TensorProto.INT64})


def test_truncated_file_is_one_clear_error(tmp_path: Path) -> None:
    model, _ = conv_net(13)
    path = tmp_path / "cut.onnx"
    path.write_bytes(model.SerializeToString()[:150])
    with pytest.raises(ionnx.OnnxImportError, match="not a readable ONNX model"):
        ionnx.load(path)
    with pytest.raises(ionnx.OnnxImportError, match="no such file"):
        ionnx.load(tmp_path / "missing.onnx")
    with pytest.raises(ionnx.OnnxImportError, match="not an ONNX model"):
        ionnx.load(b"")


def test_unsupported_operator_names_node_and_op() -> None:
    with pytest.raises(ionnx.OnnxImportError) as e:
        ionnx.load(unsupported_model())
    assert str(e.value) == ("node 'nms_7' (NonMaxSuppression): operator NonMaxSuppression "
                            "(opset 13) is not supported")


def test_bad_loss_and_scan_inputs_name_the_node() -> None:
    def loss(**attrs: object) -> onnx.ModelProto:
        labels = attrs.pop("labels", np.array([0, 1], np.int64))
        weights = {"t": labels, **attrs.pop("weights", {})}
        inputs = ["x", "t", *weights.keys() - {"t"}]
        return make([n("NegativeLogLikelihoodLoss", inputs, ["y"], **attrs)], {"x": (2, 3)},
                    weights, ["y"], opset=13)

    for model, message in (
            (loss(reduction="max"), r"reduction='max' is not one of \('none', 'sum', 'mean'\)"),
            (loss(labels=np.array([0.5, 1], np.float32)), "must hold class indices"),
            (loss(labels=np.array([0, 1, 2], np.int64)), r"target\) has shape \(3,\)"),
            (loss(weights={"w": rand(4)}), r"weight\) has shape \(4,\); expected \(3,\)"),
            (make([const("ax", [2]), n("CumSum", ["x", "ax"], ["y"])], {"x": (2, 3)}, {},
                  ["y"], opset=14), r"\(CumSum\): input 1 \(axis\) is 2")):
        with pytest.raises(ionnx.OnnxImportError, match=message):
            ionnx.load(model)


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
def test_bit_shifts_by_a_tensor_of_amounts(device: str) -> None:
    """BitShift as numpy shifts (opset 28): wrapping left shifts, arithmetic right shifts
    of signed ints, amounts below 0 or of the width or more give 0 (or -1)."""
    x8, y8 = np.array([-8, 4, -1, 100, -128], np.int8), np.array([2, 9, -1, 1, 7], np.int8)
    x64 = np.array([-5, 2**62 + 3, 7, -2**63], np.int64)
    y64 = np.array([63, 63, 1, 64], np.int64)
    u64 = np.array([2**64 - 1, 2**63, 12, 1], np.uint64)
    v64 = np.array([63, 63, 2, 64], np.uint64)
    nodes = [n("BitShift", [x, y], [f"{x}_{d}"], direction=d)
             for x, y in (("x8", "y8"), ("x64", "y64"), ("u64", "v64"))
             for d in ("LEFT", "RIGHT")]
    weights = {"x8": x8, "y8": y8, "x64": x64, "y64": y64, "u64": u64, "v64": v64}
    outs = [o for node in nodes for o in node.output]
    types = {o: onnx.helper.np_dtype_to_tensor_dtype(weights[o.split("_")[0]].dtype)
             for o in outs}
    model = make(nodes, {"unused": (1,)}, weights, outs, opset=28, output_types=types)
    got = ionnx.run(model, {"unused": np.zeros(1, np.float32)}, device=device)
    want = [np.array([-32, 0, 0, -56, 0], np.int8), np.array([-2, 0, -1, 50, -1], np.int8),
            np.array([-2**63, -2**63, 14, 0], np.int64), np.array([-1, 0, 3, -1], np.int64),
            np.array([2**63, 0, 48, 0], np.uint64), np.array([1, 1, 3, 0], np.uint64)]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_unsupported_attribute_and_dynamic_shape_are_named() -> None:
    bad_pad = make([n("Pad", ["x"], ["y"], pads=[0, 1, 0, 1], mode="wrap")], {"x": (2, 3)},
                   {}, ["y"], opset=10)
    with pytest.raises(ionnx.OnnxImportError, match=r"node 'Pad_y' \(Pad\): mode 'wrap'"):
        ionnx.load(bad_pad)
    dynamic = make([n("Relu", ["x"], ["r"]), n("Cast", ["r"], ["ri"], to=TensorProto.INT64),
                    n("Reshape", ["x", "ri"], ["y"])], {"x": (2,)}, {}, ["y"])
    with pytest.raises(ionnx.OnnxImportError, match=r"\(Reshape\): input 1 \(shape\) is "
                       "computed at run time"):
        ionnx.load(dynamic)
    free = make([n("Relu", ["x"], ["y"])], {"x": ("batch", 3)}, {}, ["y"])
    with pytest.raises(ionnx.OnnxImportError, match="dimension 'batch' is not known"):
        ionnx.load(free)
    assert ionnx.load(free, shapes={"x": (4, 3)}) is not None


def test_cli_writes_hl_and_fails_in_one_line(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from irtensor.tools import import_onnx

    model, _ = conv_net(13)
    good, bad, cut = tmp_path / "m.onnx", tmp_path / "bad.onnx", tmp_path / "cut.onnx"
    onnx.save(model, good)
    onnx.save(unsupported_model(), bad)
    cut.write_bytes(good.read_bytes()[:100])
    out = tmp_path / "m.mlir"
    assert import_onnx.main([str(good), "-o", str(out)]) == 0
    assert "hl.conv2d" in out.read_text()
    assert import_onnx.main([str(cut)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("irtensor-import-onnx: error: ") and err.count("\n") == 1
    assert "not a readable ONNX model" in err
    # as a process: exit status 1, one line on stderr, no traceback
    done = subprocess.run([sys.executable, "-m", "irtensor.tools.import_onnx", str(bad)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and not done.stdout
    assert done.stderr == ("irtensor-import-onnx: error: node 'nms_7' (NonMaxSuppression): "
                           "operator NonMaxSuppression (opset 13) is not supported\n")


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
def test_maxpool_of_small_integers_keeps_their_type(device: str) -> None:
    """uint8 and int8 (MaxPool's integer types) pool exactly, through f32, and stay
    integers, as onnxruntime gives them; int32 could round past 2**24 and is refused
    with the node named."""
    for elem, dtype in ((TensorProto.UINT8, np.uint8), (TensorProto.INT8, np.int8)):
        node = n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1])
        graph = onnx.helper.make_graph(
            [node], "pool", [onnx.helper.make_tensor_value_info("x", elem, [1, 2, 5, 5])],
            [onnx.helper.make_tensor_value_info("y", elem, [1, 2, 3, 3])])
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])
        low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
        x = np.random.default_rng(3).integers(low, high + 1, (1, 2, 5, 5)).astype(dtype)
        (got,) = ionnx.run(model, [x], device=device)
        (want,) = reference(model, {"x": x})
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
    node = n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2])
    graph = onnx.helper.make_graph(
        [node], "pool", [onnx.helper.make_tensor_value_info("x", TensorProto.INT32, [1, 1, 4, 4])],
        [onnx.helper.make_tensor_value_info("y", TensorProto.INT32, [1, 1, 3, 3])])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])
    with pytest.raises(ionnx.OnnxImportError, match="MaxPool of int32"):
        ionnx.run(model, [np.zeros((1, 1, 4, 4), np.int32)], device=device)
