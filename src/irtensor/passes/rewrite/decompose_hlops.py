"""decompose-hlops: every `hl` op but conv2d and the pools, written in `ll` ops.

The definitions below are the point of the design: each HLOP is a short
composition of the few `ll` op types, in tinygrad's style (`sub = add(a, neg b)`).
They keep numpy's meaning (the reference interpreter's), NaN, inf, signed zero
and integer wrap-around included, except where docs/passes/decompose-hlops.md
says otherwise (rounding of exp/log/..., and a / b for |b| outside 2**+-126 in
f32, since a / b = a * (1 / b)).

Elementwise definitions take operands already broadcast to the result shape.
Composite float definitions marked `@in_f32` compute f16 and bf16 in f32 and
round once, as numpy's half-precision loops do; f32 and f64 compute in place.
So do the reductions and normalizations marked `@value_in_f32` (mean, var,
softmax, the norms), and every sum of f16 or bf16 accumulates in f32
(`LLBuilder.sum`), as torch and tinygrad accumulate them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

import ml_dtypes
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, bf16, f16, f32, f64, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)

from irtensor import dtypes, shapes
from irtensor.dialects import hl
from irtensor.dialects._base import element_of, ints, shape_of
from irtensor.interp import ll_impls
from irtensor.passes import trace
from irtensor.passes.registry import register_pass
from irtensor.passes.rewrite.ll_builder import LLBuilder

B = LLBuilder
V = SSAValue
LOG2_E = math.log2(math.e)
LN_2 = math.log(2.0)
EXACT_INT_BOUND = 2.0**53  # every float at least this large is an even integer


def is_float(x: V) -> bool:
    return dtypes.is_float(element_of(x))


def in_f32(define: Callable[..., V]) -> Callable[..., V]:
    """Run `define` on f16/bf16 operands in f32 and round the result once."""

    @functools.wraps(define)
    def wrapped(b: B, *xs: V) -> V:
        element = element_of(xs[0])
        if element not in (f16, bf16):
            return define(b, *xs)
        return b.cast(define(b, *(b.cast(x, f32) for x in xs)), element)

    return wrapped


def value_in_f32(define: Callable[..., V]) -> Callable[..., V]:
    """`in_f32` for a definition of one value and plain parameters (axes, eps): a
    half-precision reduction or normalization computes in f32 and rounds once."""

    @functools.wraps(define)
    def wrapped(b: B, x: V, *params: object) -> V:
        element = element_of(x)
        if element not in (f16, bf16):
            return define(b, x, *params)
        return b.cast(define(b, b.cast(x, f32), *params), element)

    return wrapped


# --------------------------------------------------------------------------- arithmetic


def sub(b: B, x: V, y: V) -> V:
    return b.add(x, b.neg(y))


@in_f32
def div(b: B, x: V, y: V) -> V:
    return b.div(x, y)


def minimum(b: B, x: V, y: V) -> V:
    """Floats: -max(-x, -y) keeps NaN; ints and bool: a select (-INT_MIN overflows)."""
    return b.neg(b.max(b.neg(x), b.neg(y))) if is_float(x) else b.where(b.cmplt(y, x), y, x)


def relu(b: B, x: V) -> V:
    return b.max(x, b.const(0, like=x))


def abs_(b: B, x: V) -> V:
    """max(x, -x); for floats + 0.0, which turns -0.0 into 0.0 as numpy's abs does;
    an unsigned x is its own abs (its -x wraps to a larger value)."""
    if dtypes.is_unsigned(element_of(x)):
        return x
    m = b.max(x, b.neg(x))
    return b.add(m, b.const(0.0, like=m)) if is_float(x) else m


def rsqrt(b: B, x: V) -> V:
    return b.reciprocal(b.sqrt(x))


# --------------------------------------------------------------------------- transcendental


@in_f32
def exp(b: B, x: V) -> V:
    return b.exp2(b.mul(x, b.const(LOG2_E, like=x)))


@in_f32
def log(b: B, x: V) -> V:
    return b.mul(b.log2(x), b.const(LN_2, like=x))


@in_f32
def sigmoid(b: B, x: V) -> V:
    return b.reciprocal(b.add(b.const(1.0, like=x), exp(b, b.neg(x))))


@in_f32
def tanh(b: B, x: V) -> V:
    """2 * sigmoid(2x) - 1 (absolute, not relative, accuracy near 0)."""
    two = b.const(2.0, like=x)
    return b.add(b.mul(two, sigmoid(b, b.mul(two, x))), b.const(-1.0, like=x))


@in_f32
def cos(b: B, x: V) -> V:
    """1 - 2 sin(x/2)**2: its error does not grow with |x| as sin(x + pi/2)'s does."""
    s = b.sin(b.mul(x, b.const(0.5, like=x)))
    return sub(b, b.const(1.0, like=x), b.mul(b.const(2.0, like=x), b.mul(s, s)))


@in_f32
def pow_(b: B, x: V, y: V) -> V:
    """|x|**y = exp2(y * log2|x|), then C99's pow cases as numpy has them: the sign of a
    negative base (-0.0 and -inf too) to an odd power, NaN for a finite negative base
    to a non-integer power, and 1 for x**0, 1**y and (-1)**(+-inf)."""
    c = functools.partial(b.const, like=x)
    ax, ay = abs_(b, x), abs_(b, y)
    magnitude = b.exp2(b.mul(y, b.log2(ax)))
    integral, odd = integer_parts(b, y, ay)
    signed = b.where(and_(b, sign_bit(b, x), odd), b.neg(magnitude), magnitude)
    finite_negative = and_(b, b.cmplt(x, c(0.0)), b.cmplt(c(-math.inf), x))
    result = b.where(and_(b, finite_negative, not_(b, integral)), c(math.nan), signed)
    unit_base = and_(b, b.cmpeq(ax, c(1.0)), b.cmpeq(ay, c(math.inf)))
    one = or_(b, or_(b, b.cmpeq(y, c(0.0)), b.cmpeq(x, c(1.0))), unit_base)
    return b.where(one, c(1.0), result)


def sign_bit(b: B, x: V) -> V:
    """x < 0, or x is -0.0 (1 / -0.0 is -inf)."""
    zero = b.const(0.0, like=x)
    return or_(b, b.cmplt(x, zero), b.cmplt(b.reciprocal(x), zero))


def integer_parts(b: B, y: V, abs_y: V) -> tuple[V, V]:
    """(y is an integer, y is an odd integer); +-inf and |y| >= 2**53 are even."""
    small = b.cmplt(abs_y, b.const(EXACT_INT_BOUND, like=y))
    whole = b.cast(b.where(small, y, b.const(0.0, like=y)), i64)
    integral = or_(b, not_(b, small), b.cmpeq(b.cast(whole, element_of(y)), y))
    # 1.5 truncates to the odd 1: only an integral y can be odd
    odd = and_(b, integral,
               b.cmpeq(b.mod(whole, b.const(2, like=whole)), b.const(1, like=whole)))
    return integral, odd


# --------------------------------------------------------------------------- logic, comparisons


def not_(b: B, x: V) -> V:
    return b.cmpeq(x, b.const(False, like=x))


def and_(b: B, x: V, y: V) -> V:
    return b.where(x, y, b.const(False, like=x))


def or_(b: B, x: V, y: V) -> V:
    return b.where(x, b.const(True, like=x), y)


def xor(b: B, x: V, y: V) -> V:
    return not_(b, b.cmpeq(x, y))


def gt(b: B, x: V, y: V) -> V:
    return b.cmplt(y, x)


def le(b: B, x: V, y: V) -> V:
    """x < y or x == y: false when either is NaN (not(y < x) would be true)."""
    return or_(b, b.cmplt(x, y), b.cmpeq(x, y))


def ge(b: B, x: V, y: V) -> V:
    return or_(b, b.cmplt(y, x), b.cmpeq(x, y))


def ne(b: B, x: V, y: V) -> V:
    return not_(b, b.cmpeq(x, y))


ELEMENTWISE: dict[type[Operation], Callable[..., V]] = {
    hl.NegOp: B.neg,
    hl.AbsOp: abs_,
    hl.ReluOp: relu,
    hl.ExpOp: exp,
    hl.Exp2Op: B.exp2,
    hl.LogOp: log,
    hl.Log2Op: B.log2,
    hl.SqrtOp: B.sqrt,
    hl.RsqrtOp: rsqrt,
    hl.ReciprocalOp: B.reciprocal,
    hl.SinOp: B.sin,
    hl.CosOp: cos,
    hl.SigmoidOp: sigmoid,
    hl.TanhOp: tanh,
    hl.NotOp: not_,
    hl.AddOp: B.add,
    hl.SubOp: sub,
    hl.MulOp: B.mul,
    hl.DivOp: div,
    hl.PowOp: pow_,
    hl.MaximumOp: B.max,
    hl.MinimumOp: minimum,
    hl.IDivOp: B.idiv,
    hl.ModOp: B.mod,
    hl.AndOp: and_,
    hl.OrOp: or_,
    hl.XorOp: xor,
    hl.LtOp: B.cmplt,
    hl.LeOp: le,
    hl.GtOp: gt,
    hl.GeOp: ge,
    hl.EqOp: B.cmpeq,
    hl.NeOp: ne,
    hl.WhereOp: B.where,
}


# --------------------------------------------------------------------------- reductions


def reverse_order(b: B, x: V) -> V:
    """An order-reversing bijection: -x (floats), ~x = -x - 1 (ints, no overflow), not x."""
    if is_float(x):
        return b.neg(x)
    if dtypes.is_bool(element_of(x)):
        return not_(b, x)
    minus_one = -1 if not dtypes.is_unsigned(element_of(x)) else ll_impls.highest(element_of(x))
    return b.add(b.neg(x), b.const(minus_one, like=x))  # unsigned: -1 wraps to the maximum


def min_over(b: B, x: V, axes: tuple[int, ...], keepdim: bool) -> V:
    """min(x) = rev(max(rev(x))): neg/max/neg for floats, so NaN still wins."""
    return reverse_order(b, b.max_over(reverse_order(b, x), axes, keepdim))


@value_in_f32
def mean(b: B, x: V, axes: tuple[int, ...], keepdim: bool) -> V:
    s = b.sum(x, axes, keepdim)
    return div(b, s, b.const(shapes.numel([shape_of(x)[a] for a in axes]), like=s))


@value_in_f32
def mean_beside_var(b: B, x: V, axes: tuple[int, ...], keepdim: bool) -> V:
    """The mean of an x whose variance over the same axes is taken too: from the same
    `moments` (cse merges the two), so mean and var read x once between them."""
    if not one_pass(x, axes):
        return mean(b, x, axes, keepdim)
    return b.reshape(b.cast(moments(b, x, axes)[0], f32), shapes.reduce(shape_of(x), axes, keepdim))


@value_in_f32
def var(b: B, x: V, axes: tuple[int, ...], keepdim: bool, correction: int,
        corrected: bool = True) -> V:
    """numpy's var with `correction` (ddof). An f32 x (and f16, bf16, computed in f32) takes
    one pass over x (`moments`); an f64 x the corrected two-pass formula (as the
    interpreter's): with d = x - mean, (sum(d**2) - sum(d)**2 / n) / max(n - correction, 0).
    sum(d) is n times the rounding error of the mean, so the second term takes that
    error's share out of sum(d**2) (Chan, Golub and LeVeque), which a large mean over a
    small spread would show. `corrected=False`: plain sum(d**2) (f64 norms)."""
    n = shapes.numel([shape_of(x)[a] for a in axes])
    if one_pass(x, axes):
        _, spread = moments(b, x, axes)
        kept = shapes.reduce(shape_of(x), axes, keepdim)
        return b.reshape(spread_to_var(b, spread, n, correction), kept)
    d = sub(b, x, b.expand(mean(b, x, axes, True), shape_of(x)))
    s = b.sum(b.mul(d, d), axes, keepdim)
    if corrected:
        total = b.sum(d, axes, keepdim)
        fix = div(b, b.mul(total, total), b.const(n, like=total))
        # a fix that overflows (so does sum(d**2)) must leave inf, not make inf - inf
        largest = float(ml_dtypes.finfo(dtypes.to_numpy(element_of(total))).max)
        s = sub(b, s, minimum(b, fix, b.const(largest, like=fix)))
    return div(b, s, b.const(max(n - correction, 0), like=s))


# decompose-hlops{one-pass-moments=false} (a program to differentiate) turns `moments` off
_ONE_PASS_MOMENTS: ContextVar[bool] = ContextVar("one_pass_moments", default=True)


def one_pass(x: V, axes: tuple[int, ...]) -> bool:
    """Whether x's mean and variance over `axes` come from `moments`: f32 values (f16 and
    bf16 arrive in f32) over a non-empty set of elements, unless the pass's
    `one-pass-moments` option is off."""
    return (_ONE_PASS_MOMENTS.get() and element_of(x) == f32
            and all(shape_of(x)[a] > 0 for a in axes))


def moments(b: B, x: V, axes: tuple[int, ...]) -> tuple[V, V]:
    """(mean, spread) of an f32 x over `axes` (kept as 1s), in f64, from one read of x:
    spread is sum((x - mean)**2), the variance's numerator.

    One kernel sums d = x - k and d**2 together (a stacked pair, summed over the same
    axes: `fuse` makes it one reduction whose pair loop runs inside each block of x), in
    f64: d is exact there, and the sums lose nothing an f32 result would show. k is x's
    first element along the axes (0 where that is not finite): a shift from the data
    keeps sum(d)**2 / n, which the spread subtracts, near the spread's size, so the
    difference does not cancel the digits that matter (the shifted-data formula; Chan,
    Golub and LeVeque). Then mean = k + sum(d) / n and spread = sum(d**2) - sum(d)**2 / n,
    at least 0."""
    shape, n = shape_of(x), shapes.numel([shape_of(x)[a] for a in axes])
    first = b.shrink(x, [0] * len(shape), [1 if a in axes else d for a, d in enumerate(shape)])
    finite = b.cmpeq(sub(b, first, first), b.const(0.0, like=first))
    shift = b.where(finite, first, b.const(0.0, like=first))
    d = sub(b, b.cast(x, f64), b.expand(b.cast(shift, f64), shape))  # exact
    pair = (2, *shape)
    # the pair as pads and an add: a where on the pair index ran this kernel 20% slower
    stacked = b.add(b.pad(b.reshape(d, (1, *shape)), [0] * len(pair), [1] + [0] * len(shape)),
                    b.pad(b.reshape(b.mul(d, d), (1, *shape)), [1] + [0] * len(shape),
                          [0] * len(pair)))
    sums = b.sum(stacked, tuple(a + 1 for a in axes), keepdim=True)
    kept = shapes.reduce(shape_of(x), axes, True)
    limits = list(shape_of(sums))

    def part(i: int) -> V:
        return b.reshape(b.shrink(sums, [i] + [0] * len(kept), [i + 1, *limits[1:]]), kept)

    total, squares = part(0), part(1)
    count = b.const(float(n), like=total)
    mean_value = b.add(b.cast(shift, f64), div(b, total, count))
    spread = sub(b, squares, div(b, b.mul(total, total), count))
    return mean_value, b.max(spread, b.const(0.0, like=spread))


def spread_to_var(b: B, spread: V, n: int, correction: int) -> V:
    """spread / max(n - correction, 0) in f32, as numpy's f32 var divides: a spread
    beyond f32's range (or below its smallest denormal) overflows (underflows) first, as
    numpy's f32 sum of squares does."""
    spread = b.cast(spread, f32)
    return div(b, spread, b.const(float(max(n - correction, 0)), like=spread))


def _reduction(define: Callable[..., V]) -> Callable[[B, Operation], V]:
    def run(b: B, op: Operation) -> V:
        assert isinstance(op, hl.ReductionOp)
        extra = (op.correction.value.data,) if isinstance(op, hl.VarOp) else ()
        return define(b, op.input, ints(op.axes), op.keepdim is not None, *extra)

    return run


# --------------------------------------------------------------------------- movement


def slice_(b: B, op: hl.SliceOp) -> V:
    return b.stride(b.shrink(op.input, ints(op.starts), ints(op.limits)), ints(op.steps))


def concat(b: B, op: hl.ConcatOp) -> V:
    """Each input padded to the full length with -inf (the type's lowest, false), then
    max: exact for every element type (tinygrad adds zero pads, losing -0.0)."""
    axis, total = op.axis.value.data, shape_of(op.res)[op.axis.value.data]
    parts, start = [], 0
    for x in op.inputs:
        low, high = [0] * len(shape_of(x)), [0] * len(shape_of(x))
        low[axis], high[axis] = start, total - start - shape_of(x)[axis]
        parts.append(b.pad(x, low, high, -math.inf))
        start += shape_of(x)[axis]
    return functools.reduce(b.max, parts)


# --------------------------------------------------------------------------- nn


def matmul(b: B, op: hl.MatmulOp) -> V:
    """numpy.matmul: a (.., n, k, 1) and b (.., 1, k, m) expanded, multiplied, summed over k."""
    x, y = op.lhs, op.rhs
    sx = (1, *shape_of(x)) if len(shape_of(x)) == 1 else shape_of(x)
    sy = (*shape_of(y), 1) if len(shape_of(y)) == 1 else shape_of(y)
    batch = shapes.broadcast(sx[:-2], sy[:-2])
    full = (*batch, sx[-2], sx[-1], sy[-1])

    def lift(v: V, shape: tuple[int, ...]) -> V:  # reshape to `shape` (1s in front), expand
        return b.expand(b.reshape(v, (1,) * (len(full) - len(shape)) + shape), full)

    summed = b.sum_of_products(lift(x, (*sx, 1)), lift(y, (*sy[:-2], 1, *sy[-2:])),
                               (len(batch) + 1,), keepdim=True)
    return b.reshape(summed, shape_of(op.res))


@value_in_f32
def softmax(b: B, x: V, axis: int) -> V:
    e = exp(b, sub(b, x, b.expand(b.max_over(x, (axis,), True), shape_of(x))))
    return div(b, e, b.expand(b.sum(e, (axis,), True), shape_of(x)))


@value_in_f32
def log_softmax(b: B, x: V, axis: int) -> V:
    shifted = sub(b, x, b.expand(b.max_over(x, (axis,), True), shape_of(x)))
    return sub(b, shifted, b.expand(log(b, b.sum(exp(b, shifted), (axis,), True)), shape_of(x)))


@value_in_f32
def normalize(b: B, x: V, axes: tuple[int, ...], eps: float) -> V:
    """(x - mean) / sqrt(biased var + eps), statistics over `axes`: for f32 from one read
    of x (`moments`), so the norm reads x twice; f64 takes the plain two-pass form (its
    mean's error matters only where the mean dwarfs the spread, and the correction would
    cost a pass over x)."""
    if one_pass(x, axes):
        n = shapes.numel([shape_of(x)[a] for a in axes])
        mean_value, spread = moments(b, x, axes)
        centre, v = b.cast(mean_value, f32), spread_to_var(b, spread, n, 0)
    else:
        centre, v = mean(b, x, axes, True), var(b, x, axes, True, 0, False)
    d = sub(b, x, b.expand(centre, shape_of(x)))
    return div(b, d, b.expand(b.sqrt(b.add(v, b.const(eps, like=v))), shape_of(x)))


def batch_norm(b: B, op: hl.BatchNormOp) -> V:
    axes = tuple(a for a in range(len(shape_of(op.input))) if a != 1)
    return normalize(b, op.input, axes, op.eps.value.data)


def group_norm(b: B, op: hl.GroupNormOp) -> V:
    shape, groups = shape_of(op.input), op.groups.value.data
    rows = b.reshape(op.input, (shape[0], groups, shapes.numel(shape[1:]) // groups))
    return b.reshape(normalize(b, rows, (2,), op.eps.value.data), shape)


STRUCTURED: dict[type[Operation], Callable[[B, Operation], V]] = {
    hl.CastOp: lambda b, op: b.cast(op.input, element_of(op.res)),
    hl.SumOp: _reduction(B.sum),
    hl.MaxOp: _reduction(B.max_over),
    hl.MinOp: _reduction(min_over),
    hl.MeanOp: _reduction(mean),
    hl.VarOp: _reduction(var),
    hl.ReshapeOp: lambda b, op: b.reshape(op.input, shape_of(op.res)),
    hl.PermuteOp: lambda b, op: b.permute(op.input, ints(op.perm)),
    hl.BroadcastToOp: lambda b, op: b.broadcast(op.input, shape_of(op.res)),
    hl.PadOp: lambda b, op: b.pad(op.input, ints(op.low), ints(op.high), op.pad_value),
    hl.SliceOp: slice_,
    hl.FlipOp: lambda b, op: b.flip(op.input, ints(op.axes)),
    hl.ConcatOp: concat,
    hl.MatmulOp: matmul,
    hl.SoftmaxOp: lambda b, op: softmax(b, op.input, op.axis.value.data),
    hl.LogSoftmaxOp: lambda b, op: log_softmax(b, op.input, op.axis.value.data),
    hl.LayerNormOp: lambda b, op: normalize(b, op.input, ints(op.axes), op.eps.value.data),
    hl.BatchNormOp: batch_norm,
    hl.GroupNormOp: group_norm,
}


# --------------------------------------------------------------------------- the pass


class DecomposeElementwise(RewritePattern):
    """An elementwise hl op: operands broadcast to the result shape, then its definition."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (define := ELEMENTWISE.get(type(op))) is None:
            return
        b, shape = LLBuilder(rewriter, like=op), shape_of(op.results[0])
        value = define(b, *(b.broadcast(x, shape) for x in op.operands))
        _replace(rewriter, op, value)


class DecomposeStructured(RewritePattern):
    """A cast, reduction, movement or nn hl op (not conv2d or a pool): its definition.
    A mean in `beside_var` (`means_beside_var`) takes `mean_beside_var`."""

    def __init__(self, beside_var: frozenset[Operation] = frozenset()):
        self.beside_var = beside_var

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        define = STRUCTURED.get(type(op))
        if op in self.beside_var:
            define = _reduction(mean_beside_var)
        if define is not None:
            _replace(rewriter, op, define(LLBuilder(rewriter, like=op), op))


def means_beside_var(module: ModuleOp) -> frozenset[Operation]:
    """The hl.mean ops whose input also feeds an hl.var over the same axes (torch's and
    tinygrad's batch norm: x.mean(axes), x.var(axes))."""
    variances = {(op.input, ints(op.axes)) for op in module.walk() if isinstance(op, hl.VarOp)}
    return frozenset(op for op in module.walk() if isinstance(op, hl.MeanOp)
                     and (op.input, ints(op.axes)) in variances)


def _replace(rewriter: PatternRewriter, op: Operation, value: V) -> None:
    assert value.type == op.results[0].type, f"{op.name}: {value.type} != {op.results[0].type}"
    rewriter.replace(op, [], [value])


@register_pass
@dataclass(frozen=True)
class DecomposeHLOps(ModulePass):
    """decompose-hlops: rewrite every hl op but conv2d and the pools into ll ops.

    `one_pass_moments` (default true): f32 var, a mean beside it and the norms take their
    statistics from one read of x (`moments`). false: the two-pass forms, whose gradient
    (the `grad` pass) is about half as costly: autograd decomposes with it off."""

    name = "decompose-hlops"
    one_pass_moments: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        token = _ONE_PASS_MOMENTS.set(self.one_pass_moments)
        try:
            trace.rewrite_module(op, [DecomposeElementwise(),
                                      DecomposeStructured(means_beside_var(op))])
        finally:
            _ONE_PASS_MOMENTS.reset(token)
