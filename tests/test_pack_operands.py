"""pack-operands keeps the meaning of programs, and packs the operands it promises to:
a contraction's operand that its columns read with a stride (`x @ w.T`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, f32, f64, i32

from conftest import DEVICES, device_param
from irtensor import Tensor, ir
from irtensor.dialects import kernel
from irtensor.pipeline import Pipeline, PipelineError
from irtensor.testing import Program, assert_preserves_semantics, assert_reads_in_bounds, programs
from irtensor.testing.programs import random_input

HL_TO_KERNEL = "decompose-hlops,conv-to-mul-sum,fold-constants,cse,dce,fuse,split-reductions"
# A threshold small enough that the generated programs' tiny matmuls are packed.
EAGER = "pack-operands{min-reuse=2}"


def kernels(module: ModuleOp) -> list[kernel.KernelOp]:
    return [op for op in module.walk() if isinstance(op, kernel.KernelOp)]


def packs(module: ModuleOp) -> list[kernel.KernelOp]:
    return [k for k in kernels(module) if k.sym_name.data.startswith("pack_")]


@given(programs(dialect="hl", dtypes=(f32, f64, i32), max_ops=6, max_dim=6,
                ops=("linalg", "movement", "elementwise"), containing="hl.matmul"))
def test_pack_operands_keeps_the_meaning_of_programs(program: Program) -> None:
    fused = program.module.clone()
    Pipeline(HL_TO_KERNEL).run(fused)
    after = assert_preserves_semantics(EAGER, fused, program.inputs, rtol=1e-5, atol=1e-5)
    assert_reads_in_bounds(after)
    Pipeline("cse,reorder-loops").run(after)  # the copies take a schedule
    after.verify()


@st.composite
def transposed_matmuls(draw: st.DrawFn) -> tuple[Program, bool]:
    """`x @ permute(w)` with a bias, batch axes and any element type; and whether the
    pass should pack w (a strided column read reused across at least 2 rows)."""
    element = draw(st.sampled_from(["f32", "f64", "i32"]))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    m, k, n = (draw(st.integers(1, 9)) for _ in range(3))
    lead = "".join(f"{b}x" for b in batch)
    rank = len(batch) + 2
    flip = [*range(len(batch)), rank - 1, rank - 2]
    x, w, wt, y = (f"tensor<{lead}{a}x{c}x{element}>" for a, c in ((m, k), (n, k), (k, n), (m, n)))
    b = f"tensor<{n}x{element}>"
    text = f"""
func.func @main(%x: {x}, %w: {w}, %b: {b}) -> {y} {{
  %t = hl.permute %w {flip} : {w} -> {wt}
  %y = hl.matmul %x, %t : {x}, {wt} -> {y}
  %c = hl.broadcast_to %b : {b} -> {y}
  %z = hl.add %y, %c : {y}, {y} -> {y}
  func.return %z : {y}
}}
"""
    module = ir.parse(text)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = [random_input(rng, a.type) for a in module.ops.first.body.block.args]
    return Program(module, inputs), m >= 2 and n >= 2 and k >= 2


@given(transposed_matmuls())
def test_packing_a_transposed_operand_keeps_the_result(case: tuple[Program, bool]) -> None:
    program, packable = case
    fused = program.module.clone()
    Pipeline(HL_TO_KERNEL).run(fused)
    after = assert_preserves_semantics(EAGER, fused, program.inputs, rtol=1e-5, atol=1e-5)
    assert_reads_in_bounds(after)
    assert len(packs(after)) == packable
    Pipeline("cse,reorder-loops").run(after)
    after.verify()


LINEAR = """
func.func @main(%x: tensor<16x24xf32>, %w: tensor<12x24xf32>) -> tensor<16x12xf32> {
  %t = hl.permute %w [1, 0] : tensor<12x24xf32> -> tensor<24x12xf32>
  %y = hl.matmul %x, %t : tensor<16x24xf32>, tensor<24x12xf32> -> tensor<16x12xf32>
  func.return %y : tensor<16x12xf32>
}
"""


def test_a_transposed_weight_is_packed_once_and_read_contiguously() -> None:
    module = ir.parse(LINEAR)
    Pipeline(f"{HL_TO_KERNEL},pack-operands").run(module)
    [copy] = packs(module)
    assert copy.sizes == (24, 12)
    [matmul] = [k for k in kernels(module) if k is not copy]
    assert matmul.inputs[1] is copy.res
    assert str(matmul.accesses[1].affine_map) == "(d0, d1, d2) -> (d1, d2)"


def test_a_matrix_vector_product_is_not_packed() -> None:
    module = ir.parse(LINEAR.replace("16x", "1x"))
    Pipeline(f"{HL_TO_KERNEL},pack-operands").run(module)
    assert packs(module) == []


def test_min_reuse_must_not_be_negative() -> None:
    with pytest.raises(PipelineError, match="min-reuse must not be negative"):
        Pipeline("pack-operands{min-reuse=-1}").run(ir.parse(LINEAR))


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
@pytest.mark.parametrize("shape", [(64, 96, 80), (3, 17, 33), (1, 40, 24)])
def test_x_at_w_transposed_matches_numpy(device: str, shape: tuple[int, int, int]) -> None:
    m, k, n = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = (Tensor(x, device=device) @ Tensor(w, device=device).T + Tensor(b, device=device))
    packed = [k for k in out.schedule() if k.kernel.sym_name.data.startswith("pack_")]
    assert len(packed) == (1 if m >= 8 else 0)
    np.testing.assert_allclose(out.numpy(), x @ w.T + b, rtol=2e-5, atol=2e-5)


@st.composite
def padded_convs(draw: st.DrawFn) -> tuple[Program, bool]:
    """A conv on a short map (channel-blocked: 32 or more output channels, rows shorter
    than two 16-lane vectors), with padding, strides and dilations, its input padded
    first with a value that may not be 0, and a relu; and whether the conv's read is a
    window that runs off the input's edges (so pack-operands pads it)."""
    n, ci = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    co = draw(st.sampled_from([32, 40]))
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride, dilation = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    padding = draw(st.integers(0, 2))
    pre = draw(st.integers(0, 1))
    value = draw(st.sampled_from([0.0, -1.5]))
    if h + 2 * (padding + pre) < dilation * (kh - 1) + 1 or \
            w + 2 * (padding + pre) < dilation * (kw - 1) + 1:
        padding += dilation * 2
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((n, ci, h, w)).astype(np.float32)
    weight = rng.standard_normal((co, ci, kh, kw)).astype(np.float32)
    source = Tensor(x).pad(((0, 0), (0, 0), (pre, pre), (pre, pre)), value=value) if pre \
        else Tensor(x)
    out = source.conv2d(Tensor(weight), stride=stride, dilation=dilation,
                        padding=padding).relu()
    module = ir.parse(out.ir())
    return Program(module, [x, weight]), padding > 0 or pre > 0


@given(padded_convs())
def test_padding_a_conv_window_keeps_the_result(case: tuple[Program, bool]) -> None:
    program, _ = case
    fused = program.module.clone()
    Pipeline(HL_TO_KERNEL).run(fused)
    after = assert_preserves_semantics("pack-operands", fused, program.inputs,
                                       rtol=1e-5, atol=1e-5)
    assert_reads_in_bounds(after)
    for copy in [k for k in kernels(after) if k.sym_name.data.startswith("pad_")]:
        [user] = [k for k in kernels(after) if copy.res in k.inputs]
        assert not user.accesses[list(user.inputs).index(copy.res)].is_masked
    Pipeline("cse,reorder-loops").run(after)
    after.verify()


def pads(module: ModuleOp) -> list[kernel.KernelOp]:
    return [k for k in kernels(module) if k.sym_name.data.startswith("pad_")]


def test_a_short_maps_padded_conv_reads_a_padded_copy() -> None:
    x = Tensor(np.zeros((2, 16, 7, 7), np.float32))
    out = x.conv2d(Tensor(np.zeros((32, 16, 3, 3), np.float32)), padding=1)
    module = ir.parse(out.ir())
    Pipeline(f"{HL_TO_KERNEL},pack-operands").run(module)
    [copy] = pads(module)
    assert copy.sizes == (2, 16, 9, 9)
    off = ir.parse(out.ir())
    Pipeline(f"{HL_TO_KERNEL},pack-operands{{pad-windows=false}}").run(off)
    assert pads(off) == []


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
@pytest.mark.parametrize(("shape", "stride", "padding", "padded"), [
    ((2, 16, 7, 7, 48, 3), 1, 1, True),   # ResNet's last stage: 3 x 3 on a 7 x 7 map
    ((1, 3, 20, 20, 32, 7), 2, 3, True),  # its stem: 7 x 7, stride 2
    ((1, 5, 5, 9, 40, 3), 1, 1, True),    # a tail of channels
    ((1, 5, 5, 9, 40, 3), 1, 2, False),   # 9 x 13 of 5 x 9: more than MAX_GROWTH, masked
])
def test_padded_windows_match_numpy(device: str, shape: tuple[int, ...], stride: int,
                                    padding: int, padded: bool) -> None:
    n, ci, h, w, co, k = shape
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, ci, h, w)).astype(np.float32)
    weight = rng.standard_normal((co, ci, k, k)).astype(np.float32)
    bias = rng.standard_normal(co).astype(np.float32)
    out = Tensor(x, device=device).conv2d(Tensor(weight, device=device),
                                          Tensor(bias, device=device), stride=stride,
                                          padding=padding).relu()
    assert any(k.kernel.sym_name.data.startswith("pad_") for k in out.schedule()) == padded
    np.testing.assert_allclose(out.numpy(), np.maximum(conv2d_reference(
        x, weight, stride, padding) + bias[:, None, None], 0), rtol=2e-5, atol=2e-5)


def conv2d_reference(x: np.ndarray, weight: np.ndarray, stride: int, padding: int
                     ) -> np.ndarray:
    """Cross-correlation in float64, as torch's conv2d computes it."""
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding,) * 2, (padding,) * 2))
    co, _, kh, kw = weight.shape
    oh = (padded.shape[2] - kh) // stride + 1
    ow = (padded.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], co, oh, ow))
    for i in range(kh):
        for j in range(kw):
            window = padded[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("nchw,oc->nohw", window, weight[:, :, i, j].astype(np.float64))
    return out


WINDOW = ("#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> "
          "(d0, d3, ((d4 + d6) + -1), ((d5 + d7) + -1)), valid (d0, d1, d2, d3, d4, d5, d6, d7) : "
          "(((d4 + d6) + {0}) >= 0, (((d4 * -1) + (d6 * -1)) + {1}) >= 0, "
          "((d5 + d7) + {2}) >= 0, (((d5 * -1) + (d7 * -1)) + {3}) >= 0), pad {4}>")
MASKED_CONV = """
func.func @main(%x: tensor<2x3x7x7xf32>, %w: tensor<32x3x3x3xf32>) -> tensor<2x32x7x7xf32> {{
  %y = kernel.kernel @r_2_1_32_3_7_7_3_3(%x, %w) space [2, 1, 32, 3, 7, 7, 3, 3]
    reduce [3, 6, 7] sum
    reads [WINDOW, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d2, d3, d6, d7)>]
    writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d2, d4, d5)>
    : (tensor<2x3x7x7xf32>, tensor<32x3x3x3xf32>) -> tensor<2x32x7x7xf32> {{
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }}
  func.return %y : tensor<2x32x7x7xf32>
}}
""".replace("WINDOW", WINDOW)


@given(st.lists(st.integers(-1, 0), min_size=4, max_size=4), st.sampled_from(["0.0", "-2.5"]),
       st.integers(0, 2**32 - 1))
def test_a_window_is_padded_only_where_its_mask_is_the_bounds(
        shifts: list[int], pad: str, seed: int) -> None:
    """A 3 x 3 window's mask with each bound kept or moved one step inwards (and two pad
    values): pack-operands keeps the result, and pads exactly the unmoved mask (only the
    bounds give the pad value at exactly the points outside the input)."""
    bounds = (-1, 7, -1, 7)
    module = ir.parse(MASKED_CONV.format(*(b + s for b, s in zip(bounds, shifts, strict=True)),
                                         pad))
    rng = np.random.default_rng(seed)
    inputs = [random_input(rng, a.type) for a in module.ops.first.body.block.args]
    after = assert_preserves_semantics("pack-operands", module, inputs, rtol=1e-5, atol=1e-5)
    assert len(pads(after)) == (shifts == [0, 0, 0, 0])


@st.composite
def strided_pointwise_convs(draw: st.DrawFn) -> Program:
    """A 1x1 conv with a stride of 2 or 3 (ResNet's downsampling shortcut), on an input
    that may be computed first (a relu), with 4 to 40 output channels and a bias."""
    n, ci, co = draw(st.integers(1, 2)), draw(st.integers(1, 5)), draw(st.integers(4, 40))
    h, w, stride = draw(st.integers(1, 9)), draw(st.integers(1, 9)), draw(st.integers(2, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((n, ci, h, w)).astype(np.float32)
    weight = rng.standard_normal((co, ci, 1, 1)).astype(np.float32)
    bias = rng.standard_normal(co).astype(np.float32)
    source = Tensor(x).relu() if draw(st.booleans()) else Tensor(x)
    out = source.conv2d(Tensor(weight), Tensor(bias), stride=stride)
    return Program(ir.parse(out.ir()), [x, weight, bias])


@st.composite
def grouped_convs(draw: st.DrawFn) -> Program:
    """A grouped conv on a short map, blocked across its channels (32 or 40 a group), with
    padding and a stride."""
    n, groups = draw(st.integers(1, 2)), draw(st.integers(2, 3))
    per_in, per_out = draw(st.integers(1, 3)), draw(st.sampled_from([32, 40]))
    h, w, k = draw(st.integers(1, 8)), draw(st.integers(1, 8)), draw(st.integers(1, 3))
    padding, stride = draw(st.integers(0, 1)), draw(st.integers(1, 2))
    if min(h, w) + 2 * padding < k:
        padding = k
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((n, groups * per_in, h, w)).astype(np.float32)
    weight = rng.standard_normal((groups * per_out, per_in, k, k)).astype(np.float32)
    out = Tensor(x).conv2d(Tensor(weight), groups=groups, padding=padding, stride=stride)
    return Program(ir.parse(out.ir()), [x, weight])


def denses(module: ModuleOp) -> list[kernel.KernelOp]:
    return [k for k in kernels(module) if k.sym_name.data.startswith("dense_")]


@given(st.one_of(strided_pointwise_convs(), grouped_convs()))
def test_a_dense_copy_keeps_the_result(program: Program) -> None:
    """A strided 1x1 conv's points, or a grouped conv's weight, read through a dense copy:
    the result is kept, and the copy is read as a projection, unmasked."""
    fused = program.module.clone()
    Pipeline(HL_TO_KERNEL).run(fused)
    after = assert_preserves_semantics("pack-operands", fused, program.inputs,
                                       rtol=1e-5, atol=1e-5)
    assert_reads_in_bounds(after)
    for copy in denses(after):
        [user] = [k for k in kernels(after) if copy.res in k.inputs]
        access = user.accesses[list(user.inputs).index(copy.res)]
        assert access.affine_map.is_projected_permutation and not access.is_masked
    Pipeline("cse,reorder-loops").run(after)
    after.verify()


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
@pytest.mark.parametrize(("shape", "stride", "copied"), [
    ((2, 24, 14, 14, 64), 2, True),  # ResNet's shortcut, smaller: a 7 x 7 output
    ((1, 8, 9, 11, 32), 3, True),    # a stride of 3, a ragged map
    ((1, 8, 10, 10, 4), 2, False),   # 4 output channels: each point read 4 times
])
def test_strided_pointwise_convs_match_numpy(device: str, shape: tuple[int, ...], stride: int,
                                            copied: bool) -> None:
    n, ci, h, w, co = shape
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n, ci, h, w)).astype(np.float32)
    weight = rng.standard_normal((co, ci, 1, 1)).astype(np.float32)
    out = Tensor(x, device=device).conv2d(Tensor(weight, device=device), stride=stride)
    kernels_run = [k.kernel for k in out.schedule()]
    assert any(k.sym_name.data.startswith("dense_") for k in kernels_run) == copied
    if copied:  # the conv then reads its points with stride 1, blocked along them
        [conv] = [k for k in kernels_run if k.reduction_dims]
        assert conv.schedule is not None and conv.schedule.order_dims[-1] == len(conv.sizes) - 1
    np.testing.assert_allclose(out.numpy(), conv2d_reference(x, weight, stride, 0),
                               rtol=2e-5, atol=2e-5)


@st.composite
def shuffled_depthwise_convs(draw: st.DrawFn) -> Program:
    """ShuffleNet's unit: a channel shuffle of groups x per-group channels, a batch norm's
    affine and relu, then a depthwise conv (groups = channels) with padding and a stride
    of 1 or 2 on a short map."""
    n, groups, per = draw(st.integers(1, 2)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    c = groups * per
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    padding, stride = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    scale, shift = (rng.standard_normal((c, 1, 1)).astype(np.float32) for _ in range(2))
    weight = rng.standard_normal((c, 1, 3, 3)).astype(np.float32)
    shuffled = Tensor(x).reshape(n, groups, per, h, w).transpose(1, 2).reshape(n, c, h, w)
    act = (shuffled * Tensor(scale) + Tensor(shift)).relu()
    out = act.conv2d(Tensor(weight), groups=c, padding=padding, stride=stride)
    return Program(ir.parse(out.ir()), [x, scale, shift, weight])


@given(shuffled_depthwise_convs())
def test_a_shuffled_depthwise_conv_keeps_its_result_through_fuse_and_pads(program: Program
                                                                          ) -> None:
    fused = assert_preserves_semantics(HL_TO_KERNEL, program.module, program.inputs,
                                       rtol=1e-5, atol=1e-5)
    after = assert_preserves_semantics("pack-operands", fused, program.inputs,
                                       rtol=1e-5, atol=1e-5)
    assert_reads_in_bounds(after)
    for copy in pads(after):
        [user] = [k for k in kernels(after) if copy.res in k.inputs]
        assert not user.accesses[list(user.inputs).index(copy.res)].is_masked
    Pipeline("cse,reorder-loops").run(after)
    after.verify()


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
@pytest.mark.parametrize(("shape", "padded"), [
    ((1, 4, 34, 7, 7), True),     # ShuffleNet's last stage, smaller: 7 x 7 maps
    ((2, 3, 8, 14, 14), True),    # 14 x 14 maps
    ((1, 2, 8, 40, 40), False),   # rows of 40: two vectors or more, the mask stays
])
def test_shuffled_depthwise_convs_match_numpy(device: str, shape: tuple[int, ...],
                                              padded: bool) -> None:
    n, groups, per, h, w = shape
    c = groups * per
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    scale, shift = (rng.standard_normal((c, 1, 1)).astype(np.float32) for _ in range(2))
    weight = rng.standard_normal((c, 1, 3, 3)).astype(np.float32)

    def on(a: np.ndarray) -> Tensor:
        return Tensor(a, device=device)

    shuffled = on(x).reshape(n, groups, per, h, w).transpose(1, 2).reshape(n, c, h, w)
    out = (shuffled * on(scale) + on(shift)).relu().conv2d(on(weight), groups=c, padding=1)
    names = [k.kernel.sym_name.data for k in out.schedule()]
    assert any(name.startswith("pad_") for name in names) == padded
    expected_input = np.maximum(
        x.reshape(n, groups, per, h, w).transpose(0, 2, 1, 3, 4).reshape(n, c, h, w) * scale
        + shift, 0)
    expected = np.concatenate([conv2d_reference(expected_input[:, i:i + 1], weight[i:i + 1],
                                                1, 1) for i in range(c)], axis=1)
    np.testing.assert_allclose(out.numpy(), expected, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
@pytest.mark.parametrize(("groups", "per_in", "per_out", "size"), [
    (2, 4, 32, 7),   # AlexNet's groups of two, smaller, on a 7 x 7 map
    (3, 2, 40, 5),   # three groups, a tail of channels
])
def test_grouped_convs_match_numpy(device: str, groups: int, per_in: int, per_out: int,
                                   size: int) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, groups * per_in, size, size)).astype(np.float32)
    weight = rng.standard_normal((groups * per_out, per_in, 3, 3)).astype(np.float32)
    out = Tensor(x, device=device).conv2d(Tensor(weight, device=device), groups=groups,
                                          padding=1).relu()
    assert any(k.kernel.sym_name.data.startswith("dense_") for k in out.schedule())
    expected = np.concatenate([
        conv2d_reference(x[:, g * per_in:(g + 1) * per_in],
                         weight[g * per_out:(g + 1) * per_out], 1, 1)
        for g in range(groups)], axis=1)
    np.testing.assert_allclose(out.numpy(), np.maximum(expected, 0), rtol=2e-5, atol=2e-5)
