"""1x1 convs as matmuls over the output's points, end to end.

conv-to-mul-sum flattens a 1x1 conv's (OH, OW) into one dim of OH * OW points; fuse
keeps its epilogue (bias, relu, a residual) in the same kernel, writing the result by
the row-major digits of that dim; lower-kernels-to-loops reads and writes such digit
runs through `memref.collapse_shape` views. Each step keeps the meaning (the reference
interpreter; the LLVM and OpenCL devices) and the kernel verifier accepts exactly the
writes that are a dim's row-major digits.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.ir.affine import AffineDimExpr, AffineExpr

from conftest import device_param
from irtensor import ir
from irtensor.dialects import kernel
from irtensor.passes.kernel.fuse import BOUNDARIES
from irtensor.passes.loops.collapse_splits import collapsed_access
from irtensor.pipeline import Pipeline
from irtensor.runtime import llvm_device, opencl_device
from irtensor.testing import assert_preserves_semantics, assert_same_results


@st.composite
def pointwise_convs(draw: st.DrawFn) -> tuple[str, list[np.ndarray]]:
    """`conv2d(x, w)` with a 1x1 kernel (strides and groups drawn), then optionally
    + bias, relu and + a residual: the shapes of a ResNet block's ends, small."""
    groups = draw(st.integers(1, 2))
    n, c, o = draw(st.integers(1, 2)), groups * draw(st.integers(1, 5)), \
        groups * draw(st.integers(1, 20))
    h, w, stride = draw(st.integers(1, 9)), draw(st.integers(1, 9)), draw(st.integers(1, 2))
    oh, ow = (h - 1) // stride + 1, (w - 1) // stride + 1
    x_t, w_t = f"tensor<{n}x{c}x{h}x{w}xf32>", f"tensor<{o}x{c // groups}x1x1xf32>"
    out = f"tensor<{n}x{o}x{oh}x{ow}xf32>"
    lines = [f"%0 = hl.conv2d %x, %w strides [{stride}, {stride}] groups {groups} : "
             f"{x_t}, {w_t} -> {out}"]
    last = "%0"
    if draw(st.booleans()):
        lines.append(f"%1 = hl.add {last}, %b : {out}, tensor<{o}x1x1xf32> -> {out}")
        last = "%1"
    if draw(st.booleans()):
        lines.append(f"%2 = hl.relu {last} : {out}")
        last = "%2"
    if draw(st.booleans()):
        lines.append(f"%3 = hl.add {last}, %r : {out}, {out} -> {out}")
        last = "%3"
    body = "\n  ".join(lines)
    text = f"""
func.func @main(%x: {x_t}, %w: {w_t}, %b: tensor<{o}x1x1xf32>, %r: {out}) -> {out} {{
  {body}
  func.return {last} : {out}
}}"""
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    shapes = [(n, c, h, w), (o, c // groups, 1, 1), (o, 1, 1), (n, o, oh, ow)]
    return text, [rng.standard_normal(s).astype(np.float32) for s in shapes]


@settings(max_examples=40, deadline=None)
@given(pointwise_convs())
def test_a_pointwise_conv_is_one_kernel_over_its_points(case: tuple[str, list[np.ndarray]]
                                                        ) -> None:
    """hl-to-kernel keeps the meaning, and the conv is one reduction kernel whose space
    runs over OH * OW points in one dim; without groups, its epilogue is in it too (the
    groups' (G, O/G) axes are not yet merged back into O by a write)."""
    text, inputs = case
    module = ir.parse(text)
    after = assert_preserves_semantics("hl-to-kernel", module, inputs, rtol=1e-4, atol=1e-4)
    kernels = [op for op in after.walk() if isinstance(op, kernel.KernelOp)]
    (conv,) = [k for k in kernels if k.reduction_dims]
    out = next(op for op in after.walk() if op.name == "func.return").operands[0]
    _, _, oh, ow = out.type.get_shape()  # type: ignore[attr-defined]
    assert conv.sizes[-1] == oh * ow, conv.sizes
    if "groups 1 " in text:
        assert conv.res is out, [BOUNDARIES.get(k) for k in kernels]


@pytest.mark.parametrize("device", [device_param("llvm"), device_param("opencl")])
@settings(max_examples=15, deadline=None)
@given(case=pointwise_convs())
def test_a_pointwise_conv_runs_as_the_interpreter_says(device: str,
                                                       case: tuple[str, list[np.ndarray]]
                                                       ) -> None:
    """The devices agree with the interpreter on the fused 1x1 conv (the collapsed views
    on LLVM; the digits' index arithmetic in OpenCL C)."""
    from irtensor.interp import run

    text, inputs = case
    want = run(ir.parse(text), inputs)
    module = ir.parse(text)
    Pipeline("hl-to-kernel").run(module)
    got = (llvm_device.run(module, inputs) if device == "llvm"
           else opencl_device.run(module, inputs, "main"))
    assert_same_results(got, want, rtol=1e-4, atol=1e-4)


@st.composite
def digit_runs(draw: st.DrawFn) -> tuple[list[AffineExpr], list[int], list[int]]:
    """A buffer's axes indexed by dims, some runs of them by one dim's row-major digits:
    (exprs, the buffer's shape, the space's sizes)."""
    exprs: list[AffineExpr] = []
    shape: list[int] = []
    sizes: list[int] = []
    for _ in range(draw(st.integers(1, 3))):
        dim = len(sizes)
        digits = draw(st.one_of(st.lists(st.integers(1, 5), min_size=1, max_size=1),
                                st.lists(st.integers(2, 5), min_size=2, max_size=3)))
        sizes.append(int(np.prod(digits)))
        if len(digits) == 1:
            exprs.append(AffineDimExpr(dim))
        else:
            stride = int(np.prod(digits))
            for i, size in enumerate(digits):
                stride //= size
                e: AffineExpr = AffineDimExpr(dim)
                if stride > 1:
                    e = e // stride
                if i > 0:
                    e = e % size
                exprs.append(e)
        shape.extend(digits)
    # size-1 axes at 0 anywhere (a flatten of (2, 1, 3, 4) reads its 1 there): inside a
    # run they count for nothing; a run cut off from its top digit must not collapse
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(exprs)))
        exprs.insert(at, AffineExpr.constant(0))
        shape.insert(at, 1)
    return exprs, shape, sizes


@settings(max_examples=200)
@given(digit_runs(), st.data())
def test_collapsed_access_reads_the_same_element(case: tuple[list[AffineExpr], list[int],
                                                              list[int]],
                                                 data: st.DataObject) -> None:
    """At every point, the collapsed view's index is the element the digits pointed at
    (the same offset in a row-major buffer)."""
    exprs, shape, sizes = case
    found = collapsed_access(exprs, shape)
    runs = any(not isinstance(e, AffineDimExpr) and str(e) != "0" for e in exprs)
    assert (found is not None) == runs
    if found is None:
        return
    new_exprs, new_shape, groups = found
    assert [a for g in groups for a in g] == list(range(len(shape)))
    assert new_shape == [int(np.prod([shape[a] for a in g])) for g in groups]
    point = [data.draw(st.integers(0, s - 1)) for s in sizes]

    def offset(es: list[AffineExpr], sh: list[int]) -> int:
        index = [e.eval(point, []) for e in es]
        assert all(0 <= i < s for i, s in zip(index, sh, strict=True))
        return int(np.ravel_multi_index(index, sh))

    assert offset(new_exprs, new_shape) == offset(exprs, shape)


KERNEL = """
func.func @main(%x: tensor<12xf32>) -> tensor<{shape}xf32> {{
  %0 = kernel.kernel @E(%x) space [12] reads [#kernel.access<(d0) -> (d0)>]
    writes affine_map<(d0) -> ({writes})> : (tensor<12xf32>) -> tensor<{shape}xf32> {{
  ^bb0(%1: f32):
    kernel.yield %1 : f32
  }}
  func.return %0 : tensor<{shape}xf32>
}}"""


@pytest.mark.parametrize("shape, writes", [
    ("3x4", "d0 floordiv 4, d0 mod 4"), ("2x3x2", "d0 floordiv 6, (d0 floordiv 2) mod 3, d0 mod 2"),
])
def test_the_verifier_accepts_a_dim_written_by_its_digits(shape: str, writes: str) -> None:
    module = ir.parse(KERNEL.format(shape=shape, writes=writes))
    ir.verify(module)
    from irtensor.interp import run

    x = np.arange(12, dtype=np.float32)
    (got,) = run(module, [x])
    np.testing.assert_array_equal(got, x.reshape(got.shape))


@pytest.mark.parametrize("shape, writes, message", [
    ("4x3", "d0 floordiv 4, d0 mod 4", "ranges over 4, its axis has 3"),
    ("3x4", "d0 floordiv 3, d0 mod 4", "not its row-major digits"),
    ("2x4", "d0 floordiv 4, d0 mod 4", "into 8 elements"),
])
def test_the_verifier_refuses_other_splits(shape: str, writes: str, message: str) -> None:
    with pytest.raises(Exception, match=message):
        ir.verify(ir.parse(KERNEL.format(shape=shape, writes=writes)))
