"""conv-to-mul-sum: conv2d and the pools as pad + sliding-window views + mul + reduce.

    conv2d(x, w)   = sum over (C/groups, KH, KW) of windows(pad(x)) * w
    max_pool2d(x)  = max over (KH, KW) of windows(pad(x, -inf))
    avg_pool2d(x)  = sum over (KH, KW) of windows(pad(x)) * (1 / (KH * KW))

The windows are views, built from movement ops only (tinygrad's `_pool`): no
im2col copy is made, so after fusion a convolution is one kernel.

A pool of at most POOL_VIEW_TAPS taps (3 x 3) is instead an elementwise max (or sum)
of one strided view per tap, `x[.., ky::sy, kx::sx]`: an elementwise kernel whose
loop along a row LLVM vectorises, where the reduction's loops read and wrote the
output row once per tap in scalars (ResNet-50's 3 x 3 stride-2 max pool at batch 8:
11.3 -> 2.7 ms). `pool-views=false` keeps the reduction, whose gradient splits a tie
evenly among the tied inputs (a chain of maxima splits it by halves).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irtensor.dialects import hl
from irtensor.dialects._base import ints, shape_of
from irtensor.passes import trace
from irtensor.passes.registry import register_pass
from irtensor.passes.rewrite.ll_builder import LLBuilder


class Axis(NamedTuple):
    """One windowed axis: its size (padded), the kernel, stride and dilation along it."""

    size: int
    kernel: int
    stride: int
    dilation: int

    @property
    def out(self) -> int:
        return (self.size - self.dilation * (self.kernel - 1) - 1) // self.stride + 1

    @property
    def row(self) -> int:
        """Row length of the (kernel, row) reshape: row k then starts k * dilation later."""
        return self.size + self.dilation

    @property
    def repeats(self) -> int:
        """Copies of the axis (as a view) that hold kernel * row elements."""
        return -(-self.kernel * self.row // self.size)

    @property
    def span(self) -> int:
        """Elements of a row from the first window's start to the last window's."""
        return self.stride * (self.out - 1) + 1


def _pairs(lead: Sequence[int], pairs: Sequence[tuple[int, int]]) -> list[int]:
    return [*lead, *(d for pair in pairs for d in pair)]


def windows(
    b: LLBuilder,
    x: SSAValue,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> SSAValue:
    """A view of shape (*lead, *out, *kernel) over the last len(kernel) axes of `x`:
    element [.., o, .., k, ..] is x[.., o * stride + k * dilation, ..] on each axis."""
    shape, n = shape_of(x), len(kernel)
    lead = shape[: len(shape) - n]
    axes = [Axis(*a) for a in zip(shape[len(lead) :], kernel, strides, dilations, strict=True)]
    if all(a.kernel <= a.stride and (a.dilation == 1 or a.kernel == 1) for a in axes):
        x, out_at = _disjoint_windows(b, x, lead, axes), 0  # pairs (out, kernel)
    else:
        x, out_at = _overlapping_windows(b, x, lead, axes), 1  # pairs (kernel, out)
    pairs = [len(lead) + 2 * a for a in range(n)]
    outs, kernels = [p + out_at for p in pairs], [p + 1 - out_at for p in pairs]
    return b.permute(x, [*range(len(lead)), *outs, *kernels])


def _disjoint_windows(
    b: LLBuilder, x: SSAValue, lead: Sequence[int], axes: Sequence[Axis]
) -> SSAValue:
    """Windows that do not overlap (kernel <= stride, no dilation): cut each axis into
    `out` rows of `stride` and keep the first `kernel` of each: (*lead, out, kernel, ...)."""
    zeros = [0] * len(lead)
    x = b.pad(x, zeros + [0] * len(axes), zeros + [max(0, a.out * a.stride - a.size) for a in axes])
    x = b.shrink(x, zeros + [0] * len(axes), [*lead, *(a.out * a.stride for a in axes)])
    x = b.reshape(x, _pairs(lead, [(a.out, a.stride) for a in axes]))
    return b.shrink(x, zeros + [0] * 2 * len(axes), _pairs(lead, [(a.out, a.kernel) for a in axes]))


def _overlapping_windows(
    b: LLBuilder, x: SSAValue, lead: Sequence[int], axes: Sequence[Axis]
) -> SSAValue:
    """tinygrad's `_pool`: repeat each axis (reshape + expand + reshape, a view) and read
    it as (kernel, size + dilation) rows, so row k starts k * dilation later; then keep
    the first `span` of each row and every stride-th element: (*lead, kernel, out, ...)."""
    zeros, ones = [0] * len(lead), [1] * len(lead)
    x = b.reshape(x, _pairs(lead, [(1, a.size) for a in axes]))
    x = b.expand(x, _pairs(lead, [(a.repeats, a.size) for a in axes]))
    x = b.reshape(x, [*lead, *(a.repeats * a.size for a in axes)])
    x = b.shrink(x, zeros + [0] * len(axes), [*lead, *(a.kernel * a.row for a in axes)])
    x = b.reshape(x, _pairs(lead, [(a.kernel, a.row) for a in axes]))
    x = b.shrink(x, zeros + [0] * 2 * len(axes), _pairs(lead, [(a.kernel, a.span) for a in axes]))
    return b.stride(x, _pairs(ones, [(1, a.stride) for a in axes]))


# Pools with at most this many taps per window are a fold of one view per tap.
POOL_VIEW_TAPS = 9


def tap_views(b: LLBuilder, x: SSAValue, kernel: Sequence[int], strides: Sequence[int],
              out: Sequence[int]) -> list[SSAValue]:
    """For each tap (ky, kx) of a window, the view of `x` (padded) that the tap reads
    at every output point: x[.., oy * sy + ky, ox * sx + kx] over (.., OH, OW)."""
    shape = shape_of(x)
    lead = list(shape[:-2])
    (kh, kw), (sy, sx), (oh, ow) = kernel, strides, out
    views = []
    for ky in range(kh):
        for kx in range(kw):
            view = b.shrink(x, [0] * len(lead) + [ky, kx],
                            [*lead, ky + sy * (oh - 1) + 1, kx + sx * (ow - 1) + 1])
            views.append(b.stride(view, [1] * len(lead) + [sy, sx]))
    return views


def pad_hw(b: LLBuilder, x: SSAValue, padding: Sequence[int], value: float) -> SSAValue:
    """Pad the last two axes by [top, left, bottom, right]."""
    top, left, bottom, right = padding
    lead = [0] * (len(shape_of(x)) - 2)
    return b.pad(x, [*lead, top, left], [*lead, bottom, right], value)


class Conv2dToMulSum(RewritePattern):
    """(N, C, H, W) windows as (N, G, 1, C/G, OH, OW, KH, KW) times the weight as
    (1, G, O/G, C/G, 1, 1, KH, KW), summed over C/G, KH and KW."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hl.Conv2dOp, rewriter: PatternRewriter) -> None:
        b = LLBuilder(rewriter, like=op)
        (n, _, _, _), (o, cg, kh, kw) = shape_of(op.input), shape_of(op.weight)
        groups, (_, _, oh, ow) = op.groups.value.data, shape_of(op.res)
        x = pad_hw(b, op.input, ints(op.padding), 0.0)
        x = windows(b, x, (kh, kw), ints(op.strides), ints(op.dilations))
        if kh == kw == 1 and not any(ints(op.padding)):
            rewriter.replace(op, [], [pointwise(b, x, op.weight, groups, shape_of(op.res))])
            return
        full = (n, groups, o // groups, cg, oh, ow, kh, kw)
        x = b.expand(b.reshape(x, (n, groups, 1, cg, oh, ow, kh, kw)), full)
        w = b.expand(b.reshape(op.weight, (1, groups, o // groups, cg, 1, 1, kh, kw)), full)
        summed = b.sum_of_products(x, w, (3, 6, 7), keepdim=True)
        rewriter.replace(op, [], [b.reshape(summed, shape_of(op.res))])


def pointwise(b: LLBuilder, x: SSAValue, weight: SSAValue, groups: int,
              out: Sequence[int]) -> SSAValue:
    """A 1x1 conv of the windows `x` (N, C, OH, OW, 1, 1) as a matmul over the output's
    points in a row, OH * OW: (N, G, 1, C/G, OH*OW) times the weight as (1, G, O/G, C/G, 1),
    summed over C/G. A register block then runs along all of them, not along one output
    row: a 7 x 7 output in blocks of 6 rows left a block of 1 on every row."""
    n, o, oh, ow = out
    cg = shape_of(weight)[1]
    full = (n, groups, o // groups, cg, oh * ow)
    x = b.expand(b.reshape(x, (n, groups, 1, cg, oh * ow)), full)
    w = b.expand(b.reshape(weight, (1, groups, o // groups, cg, 1)), full)
    return b.reshape(b.sum_of_products(x, w, (3,), keepdim=True), out)


def fold_windows(b: LLBuilder, x: SSAValue, op: hl.MaxPool2dOp | hl.AvgPool2dOp, views: bool,
                 elementwise: Callable[[SSAValue, SSAValue], SSAValue],
                 reduce: Callable[[SSAValue, Sequence[int]], SSAValue]) -> SSAValue:
    """The pool `op`'s windows of the padded `x`, each folded to one value: with `views`
    and at most POOL_VIEW_TAPS taps, `elementwise` across one strided view per tap, in
    tap order; else `reduce` over the window dimensions."""
    kernel, strides = ints(op.kernel), ints(op.strides)
    if views and math.prod(kernel) <= POOL_VIEW_TAPS:
        return functools.reduce(elementwise, tap_views(b, x, kernel, strides,
                                                       shape_of(op.res)[-2:]))
    x = windows(b, x, kernel, strides, (1, 1))
    rank = len(shape_of(x))
    return reduce(x, (rank - 2, rank - 1))


class MaxPool2dToMax(RewritePattern):
    """Windows of the input padded with -inf, reduced by max over (KH, KW); with
    `views`, a small window's taps as views, maxed elementwise."""

    def __init__(self, views: bool = True):
        self.views = views

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hl.MaxPool2dOp, rewriter: PatternRewriter) -> None:
        b = LLBuilder(rewriter, like=op)
        x = pad_hw(b, op.input, ints(op.padding), -math.inf)
        rewriter.replace(op, [], [fold_windows(b, x, op, self.views, b.max, b.max_over)])


class AvgPool2dToSum(RewritePattern):
    """Windows of the zero-padded input, summed over (KH, KW), over KH * KW; with
    `views`, a small window's taps as views, added elementwise in tap order."""

    def __init__(self, views: bool = True):
        self.views = views

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hl.AvgPool2dOp, rewriter: PatternRewriter) -> None:
        b = LLBuilder(rewriter, like=op)
        x = pad_hw(b, op.input, ints(op.padding), 0.0)
        total = fold_windows(b, x, op, self.views, b.add, b.sum)
        cells = b.const(float(math.prod(ints(op.kernel))), like=total)
        rewriter.replace(op, [], [b.div(total, cells)])


@register_pass
@dataclass(frozen=True)
class ConvToMulSum(ModulePass):
    """conv-to-mul-sum: rewrite hl.conv2d and the pools into pad, window views, mul, reduce.

    `pool-views`: a pool of at most POOL_VIEW_TAPS taps is an elementwise max or sum of
    one strided view per tap (`false`: a reduction over the windows, as larger pools).
    """

    name = "conv-to-mul-sum"
    pool_views: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [Conv2dToMulSum(), MaxPool2dToMax(self.pool_views),
                    AvgPool2dToSum(self.pool_views)]
        trace.rewrite_module(op, patterns)
