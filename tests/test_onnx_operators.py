"""ONNX in, the operators beyond the CNN set: attention, recurrent layers, control flow,
quantization, sampling, 3-D and dilated pools and the small ops, each against
onnxruntime (or onnx's reference where onnxruntime has no kernel or differs from the
spec) on every device; and the clear errors for what they cannot unroll or split."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto

import irtensor.onnx as ionnx
from conftest import DEVICES, device_param
from onnx_models import Case, const, make, matches_onnxruntime, n, onnxruntime_outputs, rand

ort = pytest.importorskip("onnxruntime")

reference = onnxruntime_outputs


def pools_3d_and_dilated() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """3-D convs and pools (pads, strides, dilations, ceil_mode, both divisors), dilated
    2-D pools, and MaxPool's Indices in both storage orders."""
    nodes = [n("Conv", ["v", "w3"], ["a"], pads=[1, 0, 2, 0, 1, 1], strides=[2, 1, 2],
               dilations=[1, 2, 1], group=2),
             n("MaxPool", ["v"], ["b"], kernel_shape=[2, 3, 2], strides=[2, 2, 1],
               dilations=[2, 1, 2], pads=[1, 1, 0, 0, 1, 1], ceil_mode=1),
             n("AveragePool", ["v"], ["c"], kernel_shape=[3, 2, 3], strides=[2, 2, 2],
               pads=[1, 0, 1, 1, 1, 0], ceil_mode=1),
             n("AveragePool", ["v"], ["d"], kernel_shape=[2, 2, 2], count_include_pad=1,
               pads=[1, 1, 1, 0, 0, 0]),
             n("LpPool", ["v"], ["e"], kernel_shape=[2, 2, 3], strides=[1, 2, 1], p=3),
             n("AveragePool", ["x"], ["f"], kernel_shape=[2, 3], dilations=[2, 2],
               pads=[1, 1, 1, 1]),
             n("MaxPool", ["x"], ["g", "gi"], kernel_shape=[3, 2], strides=[2, 1],
               pads=[1, 0, 1, 1]),
             n("MaxPool", ["x"], ["h", "hi"], kernel_shape=[2, 2], dilations=[1, 2],
               storage_order=1)]
    outs = ["a", "b", "c", "d", "e", "f", "g", "gi", "h", "hi"]
    types = {"gi": TensorProto.INT64, "hi": TensorProto.INT64}
    return make(nodes, {"v": (2, 4, 6, 7, 5), "x": (2, 3, 7, 6)}, {"w3": rand(6, 2, 2, 2, 3)},
                outs, opset=19, output_types=types), {"v": rand(2, 4, 6, 7, 5),
                                                      "x": rand(2, 3, 7, 6)}


def control_flow() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """If on a condition folded from shapes, Loop with a trip count, a carried value and a
    scan output (its body reads x from the outer scope), Scan with two states, a reversed
    input and an output stacked along axis 1."""
    h = onnx.helper
    f32 = TensorProto.FLOAT

    def info(name: str, shape: list[int] | None, elem: int = f32) -> onnx.ValueInfoProto:
        return h.make_tensor_value_info(name, elem, shape)

    then = h.make_graph([n("Mul", ["x", "x"], ["sq"])], "then", [], [info("sq", None)])
    other = h.make_graph([n("Neg", ["x"], ["ng"])], "else", [], [info("ng", None)])
    body = h.make_graph(
        [n("Identity", ["c_in"], ["c_out"]), n("Add", ["acc", "x"], ["acc_out"]),
         n("Cast", ["i"], ["fi"], to=f32), n("Mul", ["acc_out", "fi"], ["step"])],
        "body", [info("i", [], TensorProto.INT64), info("c_in", [], TensorProto.BOOL),
                 info("acc", [2, 3])],
        [info("c_out", [], TensorProto.BOOL), info("acc_out", [2, 3]), info("step", [2, 3])])
    scan_body = h.make_graph(
        [n("Add", ["s", "row"], ["s_out"]), n("Mul", ["p", "row"], ["p_out"]),
         n("Sub", ["s_out", "p_out"], ["o"])], "scan",
        [info("s", [3]), info("p", [3]), info("row", [3])],
        [info("s_out", [3]), info("p_out", [3]), info("o", [3])])
    nodes = [n("Shape", ["x"], ["shape"]), const("zero", [0]), const("two", [2]),
             n("Gather", ["shape", "zero"], ["rows"], axis=0),
             n("Equal", ["rows", "two"], ["is_two"]),
             n("Squeeze", ["is_two"], ["cond"]),
             n("If", ["cond"], ["picked"], then_branch=then, else_branch=other),
             const("trips", np.array(4, np.int64)), const("go", np.array(True)),
             n("Loop", ["trips", "go", "x"], ["total", "steps"], body=body),
             n("Scan", ["s0", "p0", "seq"], ["s_end", "p_end", "outs"], body=scan_body,
               num_scan_inputs=1, scan_input_directions=[1], scan_output_axes=[1])]
    model = make(nodes, {"x": (2, 3), "s0": (3,), "p0": (3,), "seq": (5, 3)}, {},
                 ["picked", "total", "steps", "s_end", "p_end", "outs"], opset=16)
    return model, {"x": rand(2, 3), "s0": rand(3), "p0": rand(3), "seq": rand(5, 3)}


def small_ops() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """IsInf's attributes, bitwise ops, SpaceToDepth and DepthToSpace (both modes),
    ReverseSequence, GroupNormalization, MeanVarianceNormalization, GatherND with a batch
    axis and negative indices, Compress."""
    inf = np.array([[1.0, np.inf, -np.inf], [0.0, -2.0, np.inf]], np.float32)
    ints = np.array([[5, -3, 12], [7, 0, -1]], np.int32)
    weights = {"inf": inf, "ints": ints, "other": np.array([3, 6, -8], np.int32),
               "lens": np.array([3, 1, 4, 2], np.int64), "gs": rand(6), "gb": rand(6),
               "gi": np.array([[[1, -1], [0, 2]], [[-2, 0], [1, 1]]], np.int64),
               "keep": np.array([True, False, True, True])}
    nodes = [n("IsInf", ["inf"], ["pos"], detect_negative=0),
             n("BitwiseAnd", ["ints", "other"], ["band"]),
             n("BitwiseXor", ["ints", "other"], ["bxor"]), n("BitwiseNot", ["ints"], ["bnot"]),
             n("SpaceToDepth", ["x"], ["s2d"], blocksize=2),
             n("DepthToSpace", ["x"], ["d2s"], blocksize=2, mode="CRD"),
             n("ReverseSequence", ["seq", "lens"], ["rev"], time_axis=1, batch_axis=0),
             n("GroupNormalization", ["x6", "gs", "gb"], ["gn"], num_groups=3, epsilon=1e-3),
             n("MeanVarianceNormalization", ["x"], ["mvn"], axes=[1, 3]),
             n("GatherND", ["g", "gi"], ["gnd"], batch_dims=1),
             n("Compress", ["seq", "keep"], ["cmp"], axis=1)]
    outs = ["pos", "band", "bxor", "bnot", "s2d", "d2s", "rev", "gn", "mvn", "gnd", "cmp"]
    types = {"pos": TensorProto.BOOL, **{o: TensorProto.INT32 for o in ("band", "bxor",
                                                                         "bnot")}}
    return make(nodes, {"x": (2, 4, 4, 6), "seq": (4, 4, 3), "x6": (2, 6, 3, 2),
                        "g": (2, 3, 4)}, weights, outs, opset=21, output_types=types), \
        {"x": rand(2, 4, 4, 6), "seq": rand(4, 4, 3), "x6": rand(2, 6, 3, 2),
         "g": rand(2, 3, 4)}


def quantization() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """QuantizeLinear per tensor, per axis and in blocks (uint8, int8, int16),
    DequantizeLinear back, DynamicQuantizeLinear, MatMulInteger and QLinearMatMul."""
    f32 = np.float32
    weights = {
        "s": np.array(0.02, f32), "z": np.array(128, np.uint8),
        "sa": np.array([0.01, 0.03, 0.05], f32), "za": np.array([-3, 0, 7], np.int8),
        "sb": (np.random.default_rng(5).random((2, 3, 3)) * 0.05 + 0.01).astype(f32),
        "zb": np.random.default_rng(6).integers(-5, 5, (2, 3, 3)).astype(np.int16),
        "qa": np.random.default_rng(1).integers(0, 256, (2, 3, 4)).astype(np.uint8),
        # |b| < 64: onnxruntime's u8 x s8 kernel adds products in pairs in int16, saturating
        "qb": np.random.default_rng(2).integers(-63, 64, (4, 5)).astype(np.int8),
        "qaz": np.array(120, np.uint8), "qbz": np.array(-3, np.int8),
        "as": np.array(0.05, f32), "bs": np.array(0.02, f32), "ys": np.array(0.4, f32),
        "yz": np.array(130, np.uint8), "qb8": np.random.default_rng(3).integers(
            0, 256, (4, 5)).astype(np.uint8), "bz8": np.array(100, np.uint8)}
    nodes = [n("QuantizeLinear", ["x", "s", "z"], ["q"]),
             n("QuantizeLinear", ["x", "sa", "za"], ["qa8"], axis=1),
             n("QuantizeLinear", ["x", "sb", "zb"], ["qb16"], axis=2, block_size=2),
             n("DequantizeLinear", ["q", "s", "z"], ["dq"]),
             n("DequantizeLinear", ["qa8", "sa", "za"], ["dqa"], axis=1),
             n("DequantizeLinear", ["qb16", "sb", "zb"], ["dqb"], axis=2, block_size=2),
             n("DynamicQuantizeLinear", ["x"], ["dy", "dys", "dyz"]),
             n("MatMulInteger", ["qa", "qb", "qaz", "qbz"], ["mi"]),
             n("QLinearMatMul", ["qa", "as", "qaz", "qb8", "bs", "bz8", "ys", "yz"], ["qm"])]
    outs = ["q", "qa8", "qb16", "dq", "dqa", "dqb", "dy", "dys", "dyz", "mi", "qm"]
    types = {"q": TensorProto.UINT8, "qa8": TensorProto.INT8, "qb16": TensorProto.INT16,
             "dy": TensorProto.UINT8, "dyz": TensorProto.UINT8, "mi": TensorProto.INT32,
             "qm": TensorProto.UINT8}
    x = (np.random.default_rng(4).standard_normal((2, 3, 6)) * 2).astype(f32)
    return make(nodes, {"x": (2, 3, 6)}, weights, outs, opset=21, output_types=types), \
        {"x": x}


def grid_samples() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """GridSample's three modes and three padding modes, with and without align_corners,
    on a grid that reaches past the image (where the padding modes differ; onnx's node
    cases take each combination against its reference). Bicubic with
    border padding is left to the next test: onnxruntime clamps each tap (torch's way),
    onnx's reference the position first, and irtensor follows the reference."""
    modes = [("bilinear", "border", 1), ("nearest", "reflection", 0), ("bicubic", "zeros", 0)]
    nodes = [n("GridSample", ["x", "g"], [f"y{i}"], mode=m, padding_mode=p, align_corners=a)
             for i, (m, p, a) in enumerate(modes)]
    grid = (np.random.default_rng(7).random((2, 5, 6, 2)) * 3.2 - 1.6).astype(np.float32)
    return make(nodes, {"x": (2, 3, 4, 7), "g": (2, 5, 6, 2)}, {},
                [f"y{i}" for i in range(len(modes))], opset=16), {"x": rand(2, 3, 4, 7),
                                                                  "g": grid}


def attention_models() -> list[tuple[onnx.ModelProto, dict[str, np.ndarray]]]:
    """Attention's paths: 3-D grouped-query heads with a cache, causal, a float mask
    shorter than the keys, softcap and the biased scores out; 4-D with a boolean mask, a
    sliding window, per-batch valid key counts (rows with no key left give 0) and the
    probabilities out."""
    cached = make([n("Attention", ["q", "k", "v", "mask", "pk", "pv"], ["y", "kp", "vp", "qk"],
                     q_num_heads=4, kv_num_heads=2, is_causal=1, softcap=2.5,
                     qk_matmul_output_mode=2)],
                  {"q": (2, 3, 16), "k": (2, 3, 8), "v": (2, 3, 6), "mask": (3, 4),
                   "pk": (2, 2, 2, 4), "pv": (2, 2, 2, 3)}, {}, ["y", "kp", "vp", "qk"],
                  opset=23)
    feeds = {"q": rand(2, 3, 16), "k": rand(2, 3, 8), "v": rand(2, 3, 6),
             "mask": rand(3, 4), "pk": rand(2, 2, 2, 4), "pv": rand(2, 2, 2, 3)}
    keep = np.random.default_rng(3).random((2, 1, 4, 5)) > 0.3
    windowed = make([n("Attention", ["q", "k", "v", "mask", "", "", "valid"], ["y", "", "",
                                                                             "p"],
                       left_window_size=1, right_window_size=0, is_causal=1, scale=0.7,
                       qk_matmul_output_mode=3)],
                    {"q": (2, 2, 4, 8), "k": (2, 2, 5, 8), "v": (2, 2, 5, 8)},
                    {"mask": keep, "valid": np.array([5, 2], np.int64)}, ["y", "p"], opset=25)
    return [(cached, feeds), (windowed, {"q": rand(2, 2, 4, 8), "k": rand(2, 2, 5, 8),
                                         "v": rand(2, 2, 5, 8)})]


def recurrent_model(op_type: str, gates: int, directions: int = 1, **attrs: object
                    ) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """One RNN/GRU/LSTM node over a (5, 3, 4) sequence, hidden size 6, with its bias,
    sequence lengths, initial state(s) and (LSTM) peepholes as graph inputs."""
    hid, g = 6, gates * 6
    lstm = op_type == "LSTM"
    shapes = {"x": (5, 3, 4), "w": (directions, g, 4), "r": (directions, g, hid),
              "b": (directions, 2 * g), "h0": (directions, 3, hid)}
    if lstm:
        shapes |= {"c0": (directions, 3, hid), "p": (directions, 3 * hid)}
    names = ["x", "w", "r", "b", "lens", "h0", *(["c0", "p"] if lstm else [])]
    outs = ["y", "yh", *(["yc"] if lstm else [])]
    lens = np.array([5, 2, 4] if attrs.pop("short", False) else [5, 5, 5], np.int32)
    model = make([n(op_type, names, outs, hidden_size=hid, **attrs)], shapes,
                 {"lens": lens}, outs, opset=14)
    return model, {k: rand(*s) for k, s in shapes.items()}

def transforms() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """DFT forward of a real and of a complex signal, onesided, inverse, and the inverse
    of a onesided spectrum; dft_length shorter and longer than the signal; axis 1 and 2."""
    nodes = [const("ax1", np.array(1, np.int64)), const("ax2", np.array(2, np.int64)),
             const("n12", np.array(12, np.int64)), const("n6", np.array(6, np.int64)),
             n("DFT", ["r", "", "ax1"], ["f"]),
             n("DFT", ["c", "n12", "ax2"], ["fc"]),
             n("DFT", ["r", "n6", "ax1"], ["rf"], onesided=1),
             n("DFT", ["c", "", "ax1"], ["inv"], inverse=1),
             n("DFT", ["h", "", "ax1"], ["irf"], inverse=1, onesided=1)]
    return make(nodes, {"r": (2, 8, 3, 1), "c": (2, 5, 9, 2), "h": (2, 5, 3, 2)}, {},
                ["f", "fc", "rf", "inv", "irf"], opset=20), \
        {"r": rand(2, 8, 3, 1), "c": rand(2, 5, 9, 2), "h": rand(2, 5, 3, 2)}


def quantized_convs() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """ConvInteger (uint8, both zero points, uneven pads, a stride) and QLinearConv (int8
    weights with a scale and a zero point per output channel, groups, an int32 bias,
    SAME_UPPER) of x quantized in the graph."""
    rng = np.random.default_rng(11)
    f32 = np.float32
    weights = {
        "s": np.array(0.03, f32), "z": np.array(120, np.uint8),
        "wu": rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8),
        "wuz": np.array(130, np.uint8),
        # |w| < 64: onnxruntime's u8 x s8 kernels add products in pairs in int16, saturating
        "wi": rng.integers(-63, 64, (6, 1, 3, 3)).astype(np.int8),
        "ws": (rng.random(6) * 0.02 + 0.005).astype(f32),
        "wz": np.zeros(6, np.int8), "ys": np.array(0.25, f32), "yz": np.array(100, np.uint8),
        "b": rng.integers(-500, 500, 6).astype(np.int32)}
    nodes = [n("QuantizeLinear", ["x", "s", "z"], ["qx"]),
             n("ConvInteger", ["qx", "wu", "z", "wuz"], ["ci"], pads=[1, 0, 1, 2],
               strides=[2, 1]),
             n("QLinearConv", ["qx", "s", "z", "wi", "ws", "wz", "ys", "yz", "b"], ["qc"],
               group=3, auto_pad="SAME_UPPER")]
    types = {"ci": TensorProto.INT32, "qc": TensorProto.UINT8}
    x = (rng.standard_normal((2, 3, 7, 8)) * 2).astype(f32)
    return make(nodes, {"x": (2, 3, 7, 8)}, weights, ["ci", "qc"], opset=13,
                output_types=types), {"x": x}



CASES: dict[str, Case] = {
    "pools_3d_and_dilated": pools_3d_and_dilated, "control_flow": control_flow,
    "small_ops": small_ops, "quantization": quantization, "grid_samples": grid_samples,
    "transforms": transforms, "quantized_convs": quantized_convs,
}


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
@pytest.mark.parametrize("case", sorted(CASES))
def test_operator_models_match_onnxruntime(case: str, device: str) -> None:
    matches_onnxruntime(CASES[case], device)


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
def test_attention_matches_the_onnx_reference(device: str) -> None:
    from onnx.reference import ReferenceEvaluator

    for model, feeds in attention_models():
        want = ReferenceEvaluator(model).run(None, feeds)
        got = ionnx.run(model, feeds, device=device)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
            assert np.isfinite(g).all() or np.isneginf(w).any()


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
def test_cubic_grid_sample_with_border_padding_matches_the_onnx_reference(device: str
                                                                          ) -> None:
    from onnx.reference import ReferenceEvaluator

    grid = (np.random.default_rng(8).random((1, 4, 5, 2)) * 3 - 1.5).astype(np.float32)
    for corners in (0, 1):
        model = make([n("GridSample", ["x", "g"], ["y"], mode="cubic", padding_mode="border",
                        align_corners=corners)], {"x": (1, 2, 5, 6), "g": (1, 4, 5, 2)}, {},
                     ["y"], opset=20)
        feeds = {"x": rand(1, 2, 5, 6), "g": grid}
        (want,) = ReferenceEvaluator(model).run(None, feeds)
        (got,) = ionnx.run(model, feeds, device=device)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
def test_quantized_convs_with_weight_zero_points_match_the_onnx_reference(device: str
                                                                          ) -> None:
    """Zero points per output channel that are not 0 (onnxruntime takes only zeros with
    int8 weights): the reference's integers exactly; a list of the wrong length refused."""
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    model, feeds = quantized_convs()
    (point,) = [i for i in model.graph.initializer if i.name == "wz"]
    point.CopyFrom(numpy_helper.from_array(np.array([3, -2, 0, 5, 1, -7], np.int8), "wz"))
    want = ReferenceEvaluator(model).run(None, feeds)
    for got, expected in zip(ionnx.run(model, feeds, device=device), want, strict=True):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    point.CopyFrom(numpy_helper.from_array(np.zeros(4, np.int8), "wz"))
    with pytest.raises(ionnx.OnnxImportError, match=r"QLinearConv.*input 5 of shape \(4,\) "
                       r"is neither one zero point nor one per output channel \(6\)"):
        ionnx.load(model)


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
def test_wrap_pads_longer_than_the_axis_match_the_onnx_reference(device: str) -> None:
    from onnx.reference import ReferenceEvaluator

    model = make([const("p", [0, 5, 1, 0, 2, 9]),
                  n("Pad", ["x", "p"], ["y"], mode="wrap")], {"x": (2, 3, 4)}, {}, ["y"],
                 opset=19)
    feeds = {"x": rand(2, 3, 4)}
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    (got,) = ionnx.run(model, feeds, device=device)
    assert got.shape == (2, 10, 14)
    np.testing.assert_array_equal(got, want)
    cropping = make([const("p", [0, -1, 0, 0, 1, 0]),
                     n("Pad", ["x", "p"], ["y"], mode="wrap")], {"x": (2, 3, 4)}, {}, ["y"],
                    opset=19)
    with pytest.raises(ionnx.OnnxImportError, match=r"Pad.*negative pads .* with mode 'wrap'"):
        ionnx.load(cropping)


def test_attention_refuses_heads_it_cannot_split() -> None:
    model = make([n("Attention", ["q", "k", "v"], ["y"], q_num_heads=3, kv_num_heads=2)],
                 {"q": (1, 2, 8), "k": (1, 2, 8), "v": (1, 2, 8)}, {}, ["y"], opset=23)
    with pytest.raises(ionnx.OnnxImportError, match=r"\(Attention\): input 0 \(Q\) is 3-D "
                       "with hidden size 8: attribute q_num_heads must be set and divide it"):
        ionnx.load(model)
    uneven = make([n("Attention", ["q", "k", "v"], ["y"])],
                  {"q": (1, 3, 2, 8), "k": (1, 2, 2, 8), "v": (1, 2, 2, 8)}, {}, ["y"], opset=23)
    with pytest.raises(ionnx.OnnxImportError, match="Q's 3 heads of size 8 do not fit K's 2"):
        ionnx.load(uneven)


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
def test_rotary_embedding_matches_the_onnx_reference(device: str) -> None:
    """Halves and interleaved pairs, a partial rotation, positions looked up per token."""
    from onnx.reference import ReferenceEvaluator

    angles = np.random.default_rng(5).random((6, 3)).astype(np.float32) * 6
    weights = {"cos": np.cos(angles), "sin": np.sin(angles),
               "pos": np.array([[5, 0, 2], [1, 1, 4]], np.int64)}
    nodes = [n("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], rotary_embedding_dim=6,
               num_heads=2),
             n("RotaryEmbedding", ["h", "cos", "sin", "pos"], ["z"], interleaved=1)]
    model = make(nodes, {"x": (2, 3, 16), "h": (2, 4, 3, 6)}, weights, ["y", "z"], opset=23)
    feeds = {"x": rand(2, 3, 16), "h": rand(2, 4, 3, 6)}
    want = ReferenceEvaluator(model).run(None, feeds)
    for g, w in zip(ionnx.run(model, feeds, device=device), want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
def test_recurrent_layers_match_onnxruntime(device: str) -> None:
    """What onnx's own cases leave out (its reference ignores them): other activations
    with their alpha and beta, clip, sequences that end early, LSTM's input_forget, GRU's
    linear_before_reset, both directions."""
    cases = [
        recurrent_model("RNN", 1, activations=["LeakyRelu"], activation_alpha=[0.3], clip=1.5,
                        short=True),
        recurrent_model("GRU", 3, 2, direction="bidirectional", linear_before_reset=1,
                        activations=["HardSigmoid", "Softsign", "Sigmoid", "ScaledTanh"],
                        activation_alpha=[0.3, 1.5], activation_beta=[0.4, 0.7]),
        recurrent_model("LSTM", 4, input_forget=1, clip=0.8, short=True),
        recurrent_model("LSTM", 4, 1, direction="reverse",
                        activations=["Sigmoid", "Elu", "Affine"],
                        activation_alpha=[0.6, 0.9], activation_beta=[0.1]),
    ]
    for model, feeds in cases:
        want = reference(model, feeds)
        got = ionnx.run(model, feeds, device=device)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_recurrent_layers_refuse_what_they_cannot_unroll() -> None:
    model, _ = recurrent_model("GRU", 3, direction="reverse", short=True)
    with pytest.raises(ionnx.OnnxImportError, match=r"\(GRU\): input 4 \(sequence_lens\) "
                       "shorter than the sequence \\(5\\) is supported for direction 'forward' "
                       "only"):
        ionnx.load(model)
    model, _ = recurrent_model("RNN", 1, activations=["Swish"])
    with pytest.raises(ionnx.OnnxImportError, match="activation 'Swish' is not one of"):
        ionnx.load(model)


def test_control_flow_needs_what_it_unrolls_known_at_import() -> None:
    h = onnx.helper
    f32 = TensorProto.FLOAT
    branch = h.make_graph([n("Neg", ["x"], ["y0"])], "b", [],
                          [h.make_tensor_value_info("y0", f32, None)])
    model = make([n("ReduceSum", ["x"], ["s"], keepdims=0), n("Greater", ["s", "z"], ["c"]),
                  n("If", ["c"], ["y"], then_branch=branch, else_branch=branch)],
                 {"x": (2,)}, {"z": np.zeros((), np.float32)}, ["y"], opset=13)
    with pytest.raises(ionnx.OnnxImportError, match=r"\(If\): input 0 \(cond\) is computed "
                       "at run time; irtensor unrolls control flow at import"):
        ionnx.load(model)


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
def test_operators_without_a_handler_run_their_function_body(device: str) -> None:
    """SwiGLU (a function body) and CausalConvWithState (a body made for its inputs'
    types) have no handler: they import as the operators their schemas define them in."""
    from onnx.reference import ReferenceEvaluator

    nodes = [n("SwiGLU", ["x", "v"], ["s"], alpha=1.3),
             n("CausalConvWithState", ["seq", "w", "b"], ["c", "state"], activation="silu")]
    model = make(nodes, {"x": (2, 3, 8), "v": (2, 3, 8), "seq": (2, 4, 6), "w": (4, 1, 3),
                         "b": (4,)}, {}, ["s", "c", "state"], opset=28)
    feeds = {"x": rand(2, 3, 8), "v": rand(2, 3, 8), "seq": rand(2, 4, 6),
             "w": rand(4, 1, 3), "b": rand(4)}
    want = ReferenceEvaluator(model).run(None, feeds)
    got = ionnx.run(model, feeds, device=device)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    text = str(ionnx.load(model))
    assert "hl.sigmoid" in text or "hl.exp" in text
