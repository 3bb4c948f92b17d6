"""fuse keeps the meaning of programs, leaves no ll op, never reads out of bounds,
and forms the kernels it promises."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, bf16, f16, f32, f64, i1, i32, i64
from xdsl.ir.affine import AffineMap

from conftest import device_param
from irtensor import ir
from irtensor.dialects import kernel
from irtensor.passes.kernel.fuse import BOUNDARIES, FusePass
from irtensor.passes.kernel.views import bounds, reshape_map, simplify
from irtensor.pipeline import Pipeline
from irtensor.testing import Program, assert_preserves_semantics, assert_reads_in_bounds, programs

HL_TO_LL = "decompose-hlops,conv-to-mul-sum,fold-constants,cse,dce"
ALL_TYPES = (f16, bf16, f32, f64, i32, i64, i1)


def kernels(module: ModuleOp) -> list[kernel.KernelOp]:
    return [op for op in module.walk() if isinstance(op, kernel.KernelOp)]


def fused(text: str, pipeline: str = f"{HL_TO_LL},fuse") -> ModuleOp:
    module = ir.parse(text)
    Pipeline(pipeline).run(module)
    return module


def check_fusion(program: Program, pipeline: str) -> ModuleOp:
    after = assert_preserves_semantics(pipeline, program.module, program.inputs,
                                       rtol=2e-3, atol=2e-3)
    names = {op.name for op in after.walk()}
    assert not any(n.startswith(("ll.", "hl.")) for n in names), names
    assert_reads_in_bounds(after)
    return after


@given(programs(dialect="ll", dtypes=ALL_TYPES, max_ops=10))
def test_fuse_keeps_the_meaning_of_ll_programs(program: Program) -> None:
    check_fusion(program, "fuse")


@given(programs(dialect="hl", dtypes=(f32, i32, i1), max_ops=8))
def test_hl_programs_lower_and_fuse_without_changing_results(program: Program) -> None:
    check_fusion(program, f"{HL_TO_LL},fuse")


@given(programs(dialect="ll", dtypes=(f32,), max_ops=8), st.integers(0, 3))
def test_any_recompute_limit_keeps_the_meaning(program: Program, limit: int) -> None:
    check_fusion(program, f"fuse{{recompute-limit={limit}}}")


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 4), st.integers(1, 3), st.integers(3, 6), st.sampled_from(["max", "avg"]),
       st.integers(1, 3), st.integers(1, 2), st.data(), st.integers(0, 10))
def test_pools_of_concatenations_keep_their_results(
        parts: int, channels: int, size: int, kind: str, k: int, stride: int,
        data: st.DataObject, limit: int) -> None:
    # a concat viewed as NCHW and pooled through k * k masked taps (with, maybe, a second
    # consumer): what recomputing it costs (its masks' bounds count), and the views
    # left in place of stored copies
    pad, shared = data.draw(st.integers(0, k // 2)), data.draw(st.booleans())
    out = (size + 2 * pad - k) // stride + 1
    c = channels * parts
    part, whole = f"tensor<{channels}x{size}x{size}xf32>", f"tensor<{c}x{size}x{size}xf32>"
    image, pooled = f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<1x{c}x{out}x{out}xf32>"
    args = ", ".join(f"%a{i}: {part}" for i in range(parts))
    exps = "\n".join(f"  %e{i} = hl.exp %a{i} : {part}" for i in range(parts))
    second = f"  %sq = hl.mul %cat, %cat : {whole}, {whole} -> {whole}\n" if shared else ""
    results = f"%pool, %sq : {pooled}, {whole}" if shared else f"%pool : {pooled}"
    text = f"""
func.func @main({args}) -> ({results.split(" : ")[1]}) {{
{exps}
  %cat = hl.concat {", ".join(f"%e{i}" for i in range(parts))} axis 0 : \
{", ".join([part] * parts)} -> {whole}
  %img = hl.reshape %cat : {whole} -> {image}
  %pool = hl.{kind}_pool2d %img kernel [{k}, {k}] strides [{stride}, {stride}] \
padding [{pad}, {pad}, {pad}, {pad}] : {image} -> {pooled}
{second}  func.return {results}
}}"""
    rng = np.random.default_rng(parts * 100 + size)
    inputs = [rng.standard_normal((channels, size, size)).astype(np.float32)
              for _ in range(parts)]
    after = assert_preserves_semantics(f"{HL_TO_LL},fuse{{recompute-limit={limit}}}",
                                       ir.parse(text), inputs, rtol=1e-5, atol=1e-5)
    assert_reads_in_bounds(after)


SHARED = """
func.func @main(%x: tensor<64xf32>, %y: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = hl.exp %x : tensor<64xf32>
  %a = hl.add %e, %y : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  %m = hl.mul %e, %y : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  func.return %a, %m : tensor<64xf32>, tensor<64xf32>
}
"""


def test_a_cheap_shared_value_is_recomputed_in_each_consumer() -> None:
    module = fused(SHARED)
    assert len(kernels(module)) == 2  # exp is computed inside both output kernels
    assert all(x.name == "math.exp2" for k in kernels(module) for x in k.walk()
               if x.name.startswith("math."))


def test_with_no_recomputation_a_shared_value_is_computed_once() -> None:
    module = fused(SHARED, f"{HL_TO_LL},fuse{{recompute-limit=0}}")
    ks = kernels(module)
    assert len(ks) == 3  # exp once, then each consumer reads it
    assert sum(1 for k in ks for x in k.walk() if x.name == "math.exp2") == 1


def test_a_shared_reduction_is_computed_once() -> None:
    module = fused("""
    func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
      %m = hl.max %x axes [1] keepdim : tensor<8x16xf32> -> tensor<8x1xf32>
      %a = hl.sub %x, %m : tensor<8x16xf32>, tensor<8x1xf32> -> tensor<8x16xf32>
      %b = hl.add %a, %m : tensor<8x16xf32>, tensor<8x1xf32> -> tensor<8x16xf32>
      func.return %b : tensor<8x16xf32>
    }""")
    reductions = [k for k in kernels(module) if k.reduction_dims]
    assert len(reductions) == 1 and len(kernels(module)) == 2


def test_matmul_bias_relu_is_one_kernel_with_an_epilogue() -> None:
    module = fused("""
    func.func @main(%a: tensor<5x7xf32>, %b: tensor<7x3xf32>, %c: tensor<3xf32>)
        -> tensor<5x3xf32> {
      %0 = hl.matmul %a, %b : tensor<5x7xf32>, tensor<7x3xf32> -> tensor<5x3xf32>
      %1 = hl.add %0, %c : tensor<5x3xf32>, tensor<3xf32> -> tensor<5x3xf32>
      %2 = hl.relu %1 : tensor<5x3xf32>
      func.return %2 : tensor<5x3xf32>
    }""")
    (k,) = kernels(module)
    assert k.epilogue_block is not None and k.n_epilogue_inputs == 1
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((5, 7), (7, 3), (3,)))
    from irtensor.interp import run

    (out,) = run(module, [a, b, c])
    np.testing.assert_allclose(out, np.maximum(a @ b + c, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("src", "dst"), [
    ((2, 3, 4), (6, 4)), ((6, 4), (2, 3, 4)), ((4, 6), (6, 4)), ((2, 1, 3), (3, 2)),
    ((24,), (2, 3, 4)), ((1, 12), (3, 1, 4, 1)), ((), (1, 1)), ((5,), (5,)),
])
def test_reshape_maps_point_at_the_same_element(src: tuple[int, ...], dst: tuple[int, ...]
                                                ) -> None:
    from xdsl.ir.affine import AffineMap

    amap = AffineMap(len(dst), 0, reshape_map(src, dst))
    a = np.arange(int(np.prod(src))).reshape(src)
    b = a.reshape(dst)
    for index in np.ndindex(*dst):
        assert a[amap.eval(list(index), [])] == b[index]


def test_simplify_uses_the_ranges_of_the_dims() -> None:
    from xdsl.ir.affine import AffineExpr

    d0, d1 = AffineExpr.dimension(0), AffineExpr.dimension(1)
    window = (d0 * 11 + d1) % 10  # a sliding-window index over a padded axis of 10
    assert str(simplify(window, [3, 8])) == "(d0 + d1)"
    assert str(simplify((d0 * 4 + d1) // 4, [3, 4])) == "d0"
    assert str(simplify((d0 * 4 + d1) % 4, [3, 4])) == "d1"
    assert str(simplify((d0 * 4 + d1) // 4, [3, 5])) != "d0"  # d1 may reach 4: kept
    assert bounds(d0 * -2 + 8, [5]) == (0, 8)
    # a channel merged with its plane and taken apart again (group norm): the plain index
    d2, d3 = AffineExpr.dimension(2), AffineExpr.dimension(3)
    merged = d1 * 3136 + d2 * 56 + d3
    group = (merged % 6272) // 3136 + (d1 // 2) * 2
    assert str(simplify(group, [32, 64, 56, 56])) == "d1"
    assert str(simplify((merged % 6272) // 56 % 56, [32, 64, 56, 56])) == "d2"
    assert str(simplify((d0 * 4 + d1) % 6, [3, 4])) == "(((d0 * 4) + d1) mod 6)"


@st.composite
def affine_exprs(draw: st.DrawFn, rank: int, depth: int = 3) -> Any:
    from xdsl.ir.affine import AffineExpr

    if depth == 0 or draw(st.booleans()):
        return AffineExpr.dimension(draw(st.integers(0, rank - 1))) * draw(st.integers(1, 9)) \
            + draw(st.integers(0, 5))
    a, b = draw(affine_exprs(rank, depth - 1)), draw(affine_exprs(rank, depth - 1))
    n = draw(st.integers(1, 40))
    return draw(st.sampled_from([a + b, a % n, a // n, a * draw(st.integers(1, 4)),
                                 (a % n) + (a // n) * n]))


@given(st.lists(st.integers(1, 6), min_size=1, max_size=3).flatmap(
    lambda sizes: st.tuples(st.just(sizes), affine_exprs(len(sizes)))))
def test_simplify_keeps_the_value_at_every_point(case: tuple[list[int], Any]) -> None:
    sizes, expr = case
    simpler = simplify(expr, sizes)
    for point in np.ndindex(*sizes):
        assert AffineMap(len(sizes), 0, (simpler,)).eval(list(point), []) == \
            AffineMap(len(sizes), 0, (expr,)).eval(list(point), []), (str(expr), str(simpler))


def test_bounds_checker_catches_an_out_of_range_read() -> None:
    module = ir.parse("""
    func.func @main(%x: tensor<4xf32>) -> tensor<5xf32> {
      %0 = kernel.kernel @E_5(%x) space [5] reads [#kernel.access<(d0) -> (d0)>]
             writes affine_map<(d0) -> (d0)> : (tensor<4xf32>) -> tensor<5xf32> {
      ^bb0(%v: f32):
        kernel.yield %v : f32
      }
      func.return %0 : tensor<5xf32>
    }""")
    with pytest.raises(AssertionError, match="index 4 outside size 4"):
        assert_reads_in_bounds(module)


def test_fuse_is_registered_with_its_option() -> None:
    assert str(Pipeline("fuse{recompute-limit=3}")) == "fuse{recompute_limit=3}"
    assert FusePass().recompute_limit == 8


UNARY_F32 = ("relu", "exp", "neg", "sqrt", "sigmoid")
BINARY_F32 = ("add", "mul", "sub", "maximum")


@st.composite
def gradient_weight_programs(draw: st.DrawFn) -> tuple[str, int, int, int]:
    """`sum_b expr(g, h)[b, o] * x[b, i]`: a chain of ops on [b, o] under a matmul."""
    b, o, i = draw(st.integers(1, 6)), draw(st.integers(1, 6)), draw(st.integers(1, 40))
    t = f"tensor<{b}x{o}xf32>"
    lines, values = [], ["%g", "%h"]
    for k in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            op, args = draw(st.sampled_from(UNARY_F32)), [draw(st.sampled_from(values))]
            lines.append(f"%v{k} = hl.{op} {args[0]} : {t}")
        else:
            op = draw(st.sampled_from(BINARY_F32))
            args = [draw(st.sampled_from(values)), draw(st.sampled_from(values))]
            lines.append(f"%v{k} = hl.{op} {args[0]}, {args[1]} : {t}, {t} -> {t}")
        values.append(f"%v{k}")
    body = "\n  ".join(lines)
    text = f"""
func.func @main(%g: {t}, %h: {t}, %x: tensor<{b}x{i}xf32>) -> tensor<{o}x{i}xf32> {{
  {body}
  %t = hl.permute {values[-1]} [1, 0] : {t} -> tensor<{o}x{b}xf32>
  %r = hl.matmul %t, %x : tensor<{o}x{b}xf32>, tensor<{b}x{i}xf32> -> tensor<{o}x{i}xf32>
  func.return %r : tensor<{o}x{i}xf32>
}}"""
    return text, b * o, i, b


def expression_ops(text: str) -> int:
    """Ops of the expression under the matmul as fuse sees them: after lowering's
    folds (`g - (-g)` is `g + g`, one op), less the matmul's own multiply."""
    lowered = fused(text, HL_TO_LL)
    structural = ("ll.const", "ll.reduce", "ll.reshape", "ll.expand", "ll.permute")
    return sum(op.name.startswith("ll.") and op.name not in structural
               for op in lowered.walk()) - 1


def positive_inputs(module: ModuleOp, seed: int) -> list[np.ndarray]:
    """f32 arrays for the function's arguments, each element at least 0.1 (sqrt, log)."""
    fn = next(op for op in module.walk() if op.name == "func.func")
    rng = np.random.default_rng(seed)
    return [np.abs(rng.standard_normal(a.type.get_shape())).astype(np.float32) + 0.1
            for a in fn.body.block.args]


def fused_on_positive_inputs(text: str, seed: int) -> tuple[ModuleOp, list[np.ndarray]]:
    """`text` through hl-to-ll and fuse, its meaning kept on positive inputs from `seed`,
    its reads in bounds; the fused module and the inputs."""
    module = ir.parse(text)
    inputs = positive_inputs(module, seed)
    after = assert_preserves_semantics(f"{HL_TO_LL},fuse", module, inputs,
                                       rtol=2e-3, atol=2e-3)
    assert_reads_in_bounds(after)
    return after, inputs


@given(gradient_weight_programs(), st.integers(0, 2**31 - 1))
def test_hoisting_a_broadcast_subexpression_keeps_the_meaning(
        case: tuple[str, int, int, int], seed: int) -> None:
    from irtensor.passes.kernel.hoist import HOIST_MIN_OPS, HOIST_MIN_REPEATS

    text, rows, columns, batch = case
    n_ops = expression_ops(text)
    after, _ = fused_on_positive_inputs(text, seed)
    reductions = [k for k in kernels(after) if k.reduction_dims]
    assert len(reductions) == 1
    reasons = [BOUNDARIES.get(k, "") for k in kernels(after)]
    hoists = [r for r in reasons if r.startswith("a reduction reads it broadcast")]
    # a value with several consumers (`add %v1, %v1`) too costly to recompute is computed
    # on its own first, whatever the hoisting: the expression left under the matmul is less
    shared = any("consumers" in r for r in reasons)
    if columns < HOIST_MIN_REPEATS:  # seen at too few points: computed in the matmul
        assert not hoists, reasons
        assert shared or len(kernels(after)) == 1, reasons
    # (one value is not hoisted; nor one the matmul sums over a batch of 1, which it
    # reads once per output)
    elif n_ops >= HOIST_MIN_OPS and rows > 1 and batch > 1 and not shared:
        body_ops = [x for x in reductions[0].body.walk() if x.name.startswith(("arith", "math"))]
        assert [x.name for x in body_ops] == ["arith.mulf"], body_ops


@st.composite
def computed_conv_inputs(draw: st.DrawFn) -> tuple[str, int, int]:
    """`conv2d(expr(x, s), w)`, padded or not, strided, dilated: a chain of elementwise
    ops on the conv's input, which the conv reads through overlapping windows."""
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 20))
    h, w = draw(st.integers(3, 7)), draw(st.integers(3, 7))
    k, stride, dilation = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pad = [draw(st.integers(0, 2)) for _ in range(4)]
    oh = (h + pad[0] + pad[2] - dilation * (k - 1) - 1) // stride + 1
    ow = (w + pad[1] + pad[3] - dilation * (k - 1) - 1) // stride + 1
    if oh < 1 or ow < 1:
        k = dilation = 1
        oh = (h + pad[0] + pad[2] - 1) // stride + 1
        ow = (w + pad[1] + pad[3] - 1) // stride + 1
    t = f"tensor<{n}x{c}x{h}x{w}xf32>"
    lines, values = [], ["%x"]
    for i in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            op, arg = draw(st.sampled_from(UNARY_F32)), draw(st.sampled_from(values))
            lines.append(f"%v{i} = hl.{op} {arg} : {t}")
        else:
            op, arg = draw(st.sampled_from(BINARY_F32)), draw(st.sampled_from(values))
            lines.append(f"%v{i} = hl.{op} {arg}, %s : {t}, tensor<{c}x1x1xf32> -> {t}")
        values.append(f"%v{i}")
    body = "\n  ".join(lines)
    out, wt = f"tensor<{n}x{o}x{oh}x{ow}xf32>", f"tensor<{o}x{c}x{k}x{k}xf32>"
    attributes = (f"strides [{stride}, {stride}] padding [{', '.join(map(str, pad))}] "
                  f"dilations [{dilation}, {dilation}]")
    text = f"""
func.func @main(%x: {t}, %s: tensor<{c}x1x1xf32>, %w: {wt}) -> {out} {{
  {body}
  %r = hl.conv2d {values[-1]}, %w {attributes} : {t}, {wt} -> {out}
  func.return %r : {out}
}}"""
    return text, o * oh * ow * k * k // (h * w), c * k * k


@given(computed_conv_inputs(), st.integers(0, 2**31 - 1))
def test_a_conv_of_a_computed_input_keeps_the_meaning(case: tuple[str, int, int],
                                                     seed: int) -> None:
    """Whatever fuse does with the expression under the conv's windows (fused, or computed
    once in x's space and read padded), the values are the conv of the expression, no
    read leaves its buffer, and an expression read at many points per value is not
    copied per tap: no kernel is larger than the conv's input or output. (A conv that
    sums one value per output reads the expression once there: it stays fused.)"""
    from irtensor.passes.kernel.hoist import HOIST_MIN_REPEATS

    text, points, summed = case
    after, inputs = fused_on_positive_inputs(text, seed)
    returned = next(op for op in after.walk() if op.name == "func.return").operands[0]
    x, out = inputs[0].size, int(np.prod(returned.type.get_shape()))  # type: ignore[attr-defined]
    elementwise = [k for k in kernels(after) if not k.reduction_dims]
    assert all(np.prod(k.res.type.get_shape()) <= max(x, out) for k in elementwise), text
    (conv,) = [k for k in kernels(after) if k.reduction_dims]
    if points >= 2 * HOIST_MIN_REPEATS and summed > 1:
        body_ops = [op.name for op in conv.body.walk() if op.name.startswith(("arith", "math"))]
        assert body_ops == ["arith.mulf"], (text, body_ops)


@pytest.mark.parametrize("device", [device_param("llvm"), device_param("opencl")])
@settings(max_examples=12, deadline=None)
@given(case=computed_conv_inputs(), seed=st.integers(0, 2**31 - 1))
def test_a_conv_of_a_computed_input_runs_as_the_interpreter_says(
        device: str, case: tuple[str, int, int], seed: int) -> None:
    """On llvm and opencl, the conv of an expression (computed once in x's space and read
    padded, or fused into the conv's body) gives the interpreter's values."""
    from irtensor.interp import run
    from irtensor.runtime import llvm_device, opencl_device

    text, _, _ = case
    module = ir.parse(text)
    inputs = positive_inputs(module, seed)
    want = run(ir.parse(text), inputs)
    Pipeline("hl-to-kernel").run(module)
    got = (llvm_device.run(module, inputs) if device == "llvm"
           else opencl_device.run(module, inputs, "main"))
    np.testing.assert_allclose(got[0], want[0], rtol=2e-3, atol=2e-3)
