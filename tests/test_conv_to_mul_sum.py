"""conv-to-mul-sum: conv2d and the pools as pad + window views + mul + reduce.

`windows` is checked alone against numpy's sliding_window_view; the pass keeps
the meaning of conv2d (strides, padding, dilations, groups) and of both pools
under the reference interpreter, and builds the windows from movement ops only.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import ml_dtypes
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32, f64
from xdsl.ir import Block, Region
from xdsl.pattern_rewriter import PatternRewriter

from irtensor import ir, passes
from irtensor.dialects import hl
from irtensor.interp import run
from irtensor.passes.rewrite.conv_to_mul_sum import ConvToMulSum, windows
from irtensor.passes.rewrite.decompose_hlops import DecomposeHLOps
from irtensor.passes.rewrite.ll_builder import LLBuilder
from irtensor.pipeline import Pipeline
from irtensor.testing import Program, programs
from test_decompose_hlops import (
    ELEMENTS,
    EXAMPLES,
    FLOATS,
    arrays,
    assert_close,
    decompose,
    hl_ops,
    module_of,
    typed,
)

VIEWS = {"ll.pad", "ll.reshape", "ll.expand", "ll.permute", "ll.shrink", "ll.stride"}
# ll.cast: a sum of f16 or bf16 products accumulates in f32 and rounds once.
CONV_OPS = VIEWS | {"ll.mul", "ll.reduce", "ll.const", "ll.cast"}
EXAMPLE = Path(__file__).parent.parent / "examples" / "conv_block.mlir"


def op_names(module: ModuleOp) -> set[str]:
    return {op.name for op in module.walk()} - {"builtin.module", "func.func", "func.return"}


# --------------------------------------------------------------------------- windows alone


def windows_module(
    shape: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
    dilations: Sequence[int],
) -> ModuleOp:
    """`@main(x) { return windows(x, ...) }`, the ll ops built by `windows`."""
    block = Block(arg_types=[typed(f32, shape)])
    ret = func.ReturnOp()
    block.add_op(ret)
    view = windows(LLBuilder(PatternRewriter(ret)), block.args[0], kernel, strides, dilations)
    ret.operands = [view]
    return ModuleOp([func.FuncOp("main", ([block.args[0].type], [view.type]), Region(block))])


@st.composite
def window_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...],
                                           tuple[int, ...]]:
    """(shape, kernel, strides, dilations) over the last 1 or 2 axes of a rank 1-4 shape."""
    n = draw(st.integers(1, 2))
    lead = tuple(draw(st.integers(0, 2)) for _ in range(draw(st.integers(0, 2))))
    kernel = tuple(draw(st.integers(1, 4)) for _ in range(n))
    strides = tuple(draw(st.integers(1, 4)) for _ in range(n))
    dilations = tuple(draw(st.integers(1, 3)) for _ in range(n))
    sizes = tuple(d * (k - 1) + 1 + draw(st.integers(0, 6)) for k, d in zip(kernel, dilations,
                                                                             strict=True))
    return (*lead, *sizes), kernel, strides, dilations


@settings(max_examples=EXAMPLES * 2)
@given(window_cases())
def test_windows_are_numpys_sliding_windows(case: tuple[tuple[int, ...], ...]) -> None:
    shape, kernel, strides, dilations = case
    n = len(kernel)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilations, strict=True)]
    view = sliding_window_view(x, spans, axis=tuple(range(-n, 0)))
    picks = (*(slice(None, None, s) for s in strides), *(slice(None, None, d) for d in dilations))
    want = view[(..., *picks)]
    module = windows_module(shape, kernel, strides, dilations)
    (got,) = run(module, [x])
    np.testing.assert_array_equal(got, want)
    assert op_names(module) <= VIEWS


def test_windows_without_overlap_need_no_repeat() -> None:
    """kernel <= stride: a reshape into rows of `stride` and a shrink, no expand."""
    module = windows_module((4, 8, 8), (2, 2), (3, 2), (1, 1))  # 8 rows padded to 3 * 3
    assert op_names(module) == {"ll.pad", "ll.shrink", "ll.reshape", "ll.permute"}
    overlapping = windows_module((4, 9, 8), (3, 3), (1, 1), (1, 1))
    assert "ll.expand" in op_names(overlapping)


# --------------------------------------------------------------------------- conv2d


@st.composite
def conv_cases(draw: st.DrawFn) -> tuple[ModuleOp, list[np.ndarray]]:
    element = draw(st.sampled_from(FLOATS))
    groups, cg, og = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilations = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(4))
    h, w = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    assume(h + padding[0] + padding[2] >= dilations[0] * (kh - 1) + 1)
    assume(w + padding[1] + padding[3] >= dilations[1] * (kw - 1) + 1)
    sx, sw = (draw(st.integers(0, 2)), groups * cg, h, w), (groups * og, cg, kh, kw)
    # Finite values: the interpreter's conv2d (np.tensordot, BLAS) skips zero weights, so
    # inf * 0 and NaN * 0 give 0 there (see test_conv2d_propagates_nan_as_ieee_does).
    x = draw(arrays(element, sx, moderate=True, finite=True))
    k = draw(arrays(element, sw, moderate=True, finite=True))
    build = functools.partial(hl.Conv2dOp, strides=strides, padding=padding,
                              dilations=dilations, groups=groups)
    return module_of([typed(element, sx), typed(element, sw)], build), [x, k]


@settings(max_examples=EXAMPLES * 2)
@given(conv_cases())
def test_conv2d_is_windows_times_weights_summed(case: tuple[ModuleOp, list[np.ndarray]]) -> None:
    module, (x, k) = case
    after = decompose(module, conv=True)
    assert op_names(after) <= CONV_OPS
    (want,), (got,) = run(module, [x, k]), run(after, [x, k])
    # Both sums of n = C/groups * KH * KW products are within n u sum|x w| of the exact
    # value in any order; the ll form also rounds each product: (n + 1) eps sum|x w|.
    n = k.shape[1] * k.shape[2] * k.shape[3]
    scale = _same_op_in_f64(module, [np.abs(x), np.abs(k)])
    tiny = 2 * float(ml_dtypes.finfo(want.dtype).smallest_subnormal)
    assert_close(got, want, 0.0, (n + 1) * float(ml_dtypes.finfo(want.dtype).eps) * scale + tiny)


def test_conv2d_propagates_nan_as_ieee_does() -> None:
    """inf * 0 is NaN in the ll form; the interpreter's np.tensordot (BLAS gemv, which
    skips zero factors) gives 0 for this conv2d: a known difference of the oracle."""
    x = np.array([0.0, np.inf, np.nan], np.float32).reshape(3, 1, 1, 1)
    k = np.zeros((1, 1, 1, 1), np.float32)
    module = module_of([typed(f32, x.shape), typed(f32, k.shape)], hl.Conv2dOp)
    (got,) = run(decompose(module, conv=True), [x, k])
    np.testing.assert_array_equal(got.ravel(), [0.0, np.nan, np.nan])


def _same_op_in_f64(module: ModuleOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The module's one op run in f64 (on `inputs`, cast): a scale for error bounds."""
    text = ir.to_text(module)
    for element in ("f16", "bf16", "f32"):
        text = text.replace(f"x{element}>", "xf64>")
    (out,) = run(ir.parse(text), [np.asarray(v, np.float64) for v in inputs])
    return out


# --------------------------------------------------------------------------- pools


def pooled(module: ModuleOp, views: bool) -> ModuleOp:
    """`module` after decompose-hlops and conv-to-mul-sum, pools as their taps' views
    or as reductions over their windows."""
    after = module.clone()
    Pipeline(f"decompose-hlops,conv-to-mul-sum{{pool-views={str(views).lower()}}}").run(after)
    return after


@st.composite
def pool_cases(
    draw: st.DrawFn, op: type[hl.Pool2dOp]
) -> tuple[ModuleOp, list[np.ndarray], int]:
    """A pool, its input and its window size."""
    element = draw(st.sampled_from(FLOATS))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(4))
    h, w = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    assume(h + padding[0] + padding[2] >= kernel[0] and w + padding[1] + padding[3] >= kernel[1])
    lead = tuple(draw(st.integers(0, 2)) for _ in range(draw(st.integers(0, 2))))
    shape = (*lead, h, w)
    x = draw(arrays(element, shape, moderate=op is hl.AvgPool2dOp))
    build = functools.partial(op, kernel=kernel, strides=strides, padding=padding)
    return module_of([typed(element, shape)], build), [x], kernel[0] * kernel[1]


@settings(max_examples=EXAMPLES * 2)
@given(pool_cases(hl.MaxPool2dOp), st.booleans())
def test_max_pool_is_a_max_over_windows_padded_with_minus_inf(
    case: tuple[ModuleOp, list[np.ndarray], int], views: bool,
) -> None:
    module, inputs, _ = case
    after = pooled(module, views)
    # its taps' views maxed elementwise (at most 9 taps: all here), or a reduction
    assert op_names(after) <= VIEWS | ({"ll.max"} if views else {"ll.reduce"})
    (want,), (got,) = run(module, inputs), run(after, inputs)
    assert_close(got, want)  # exact: max does not round


@settings(max_examples=EXAMPLES * 2)
@given(pool_cases(hl.AvgPool2dOp), st.booleans())
def test_avg_pool_is_a_windowed_sum_over_the_window_size(
    case: tuple[ModuleOp, list[np.ndarray], int], views: bool,
) -> None:
    module, inputs, k = case
    after = pooled(module, views)
    assert op_names(after) <= (CONV_OPS | {"ll.add", "ll.div"} if views
                               else CONV_OPS | {"ll.div"})
    (want,), (got,) = run(module, inputs), run(after, inputs)
    # k terms summed in another order (k eps sum|x| between the two), then / k as the
    # interpreter divides: one more rounding.
    scale = _same_op_in_f64(module, [np.abs(inputs[0])])
    eps = float(ml_dtypes.finfo(want.dtype).eps)
    assert_close(got, want, 2 * eps, (k + 1) * eps * scale)


# --------------------------------------------------------------------------- whole programs


def test_the_conv_block_example_keeps_its_meaning() -> None:
    module = ir.parse(EXAMPLE.read_text())
    rng = np.random.default_rng(0)
    args = module.body.block.first_op.body.block.args  # type: ignore[union-attr]
    inputs = [rng.standard_normal(a.type.get_shape()).astype(np.float32) for a in args]
    after = decompose(module, conv=True)
    assert hl_ops(after) == []
    (want,), (got,) = run(module, inputs), run(after, inputs)
    assert_close(got, want, 1e-5, 1e-6)


@settings(max_examples=EXAMPLES)
@given(programs(dialect="hl", dtypes=ELEMENTS["any"], max_ops=6))
def test_after_both_passes_no_hl_op_is_left(program: Program) -> None:
    assert hl_ops(decompose(program.module, conv=True)) == []


def test_both_passes_are_registered_and_run_from_a_pipeline() -> None:
    module = module_of([typed(f64, (1, 1, 4, 4))], functools.partial(hl.MaxPool2dOp, kernel=2))
    Pipeline("decompose-hlops,conv-to-mul-sum").run(module)
    assert hl_ops(module) == []
    for name, cls in (("conv-to-mul-sum", ConvToMulSum), ("decompose-hlops", DecomposeHLOps)):
        assert passes.get_pass(name) is cls
        assert (cls.__doc__ or "").startswith(f"{name}: ")
