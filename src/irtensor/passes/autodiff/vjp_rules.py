"""Vector-Jacobian product rules, one per `ll` op type.

A rule receives the op, the cotangent `g` of its result and an `LLBuilder` that
inserts new `ll` ops; it returns one cotangent per operand (None where the operand
takes none: integers, booleans, a `where` condition). The rules are tinygrad's:

- unary: neg -g; exp2 g*y*ln2; log2 g/(x*ln2); sqrt g/(2y); reciprocal -g*y*y;
  sin g*sin(pi/2 - x);
- binary: add (g, g); mul (g*b, g*a); max splits `g` evenly between equal operands
  (as torch.maximum and tinygrad do); a reduce max splits it evenly among the inputs
  equal to the maximum (torch's `amax`, tinygrad's rule), on every device alike;
- cast: the cotangent cast back (float to float only);
- where: (None, where(c, g, 0), where(c, 0, g));
- movement: gradients of views are views: reshape back, the inverse permute, a sum
  over the expanded axes, shrink a pad away, pad a shrink back, flip again, and an
  unstride that interleaves zeros (pad, reshape, shrink);
- reduce sum: `g` expanded back to the input's shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from irtensor import dtypes
from irtensor.dialects import ll
from irtensor.dialects._base import element_of, ints, shape_of
from irtensor.passes.rewrite.ll_builder import LLBuilder

Cotangents = Sequence[SSAValue | None]
Rule = Callable[[Operation, SSAValue, LLBuilder], Cotangents]

VJP_RULES: dict[type[Operation], tuple[str, Rule]] = {}


def register_vjp(op_type: type[Operation], name: str | None = None
                 ) -> Callable[[Rule], Rule]:
    """Decorate `rule` as the gradient of `op_type` (replacing any earlier rule)."""

    def add(rule: Rule) -> Rule:
        VJP_RULES[op_type] = (name or rule.__name__.replace("_", "-"), rule)
        return rule

    return add


def differentiable(value: SSAValue) -> bool:
    """Only float values carry a gradient."""
    t = value.type
    return isinstance(t, TensorType) and dtypes.is_float(t.element_type)


def scaled(b: LLBuilder, x: SSAValue, factor: float) -> SSAValue:
    return b.mul(x, b.const(factor, x))


# --------------------------------------------------------------------------- unary


@register_vjp(ll.NegOp)
def neg_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    return [b.neg(g)]


@register_vjp(ll.Exp2Op)
def exp2_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    return [b.mul(g, scaled(b, op.results[0], math.log(2.0)))]


@register_vjp(ll.Log2Op)
def log2_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    return [b.mul(g, b.reciprocal(scaled(b, op.operands[0], math.log(2.0))))]


@register_vjp(ll.SqrtOp)
def sqrt_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    return [b.mul(g, b.reciprocal(scaled(b, op.results[0], 2.0)))]


@register_vjp(ll.ReciprocalOp)
def reciprocal_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    y = op.results[0]
    return [b.neg(b.mul(g, b.mul(y, y)))]


@register_vjp(ll.SinOp)
def sin_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    x = op.operands[0]
    return [b.mul(g, b.sin(b.add(b.const(math.pi / 2, x), b.neg(x))))]


@register_vjp(ll.CastOp)
def cast_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    x = op.operands[0]
    return [b.cast(g, element_of(x)) if differentiable(x) else None]


# --------------------------------------------------------------------------- binary, where


@register_vjp(ll.AddOp)
def add_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    return [g, g]


@register_vjp(ll.MulOp)
def mul_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    x, y = op.operands
    return [b.mul(g, y), b.mul(g, x)]


@register_vjp(ll.DivOp)
def div_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    """d(x/y) = dx / y - dy * (x/y) / y."""
    y, quotient = op.operands[1], op.results[0]
    over_y = b.div(g, y)
    return [over_y, b.neg(b.mul(over_y, quotient))]


def tie_split(b: LLBuilder, g: SSAValue, wins: SSAValue, ties: SSAValue) -> SSAValue:
    """g where `wins`, g/2 where `ties`, else 0."""
    zero = b.const(0.0, g)
    return b.where(wins, g, b.where(ties, scaled(b, g, 0.5), zero))


@register_vjp(ll.MaxOp)
def max_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    x, y = op.operands
    if not differentiable(x):
        return [None, None]
    ties = b.cmpeq(x, y)
    return [tie_split(b, g, b.cmplt(y, x), ties), tie_split(b, g, b.cmplt(x, y), ties)]


@register_vjp(ll.WhereOp)
def where_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    cond = op.operands[0]
    zero = b.const(0.0, g)
    return [None, b.where(cond, g, zero), b.where(cond, zero, g)]


def no_gradient(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    """Integer and boolean results: nothing flows back."""
    return [None] * len(op.operands)


for _op in (ll.IDivOp, ll.ModOp, ll.CmpLtOp, ll.CmpEqOp, ll.ConstOp):
    register_vjp(_op, "no-gradient")(no_gradient)


# --------------------------------------------------------------------------- reduce


@register_vjp(ll.ReduceOp)
def reduce_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    assert isinstance(op, ll.ReduceOp)
    x, shape = op.input, shape_of(op.input)
    if op.kind.data == ll.ReduceKind.SUM:
        return [b.expand(g, shape)]
    axes = ints(op.axes)
    hits = b.cmpeq(x, b.expand(op.res, shape))
    count = b.sum(b.cast(hits, element_of(x)), axes, keepdim=True)
    share = b.expand(b.mul(g, b.reciprocal(count)), shape)
    return [b.where(hits, share, b.const(0.0, share))]


# --------------------------------------------------------------------------- movement


@register_vjp(ll.ReshapeOp)
def reshape_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    return [b.reshape(g, shape_of(op.operands[0]))]


@register_vjp(ll.PermuteOp)
def permute_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    assert isinstance(op, ll.PermuteOp)
    perm = ints(op.perm)
    inverse = tuple(sorted(range(len(perm)), key=perm.__getitem__))
    return [b.permute(g, inverse)]


@register_vjp(ll.ExpandOp)
def expand_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    before, after = shape_of(op.operands[0]), shape_of(op.results[0])
    axes = [i for i, (d, e) in enumerate(zip(before, after, strict=True)) if d != e]
    return [b.sum(g, axes, keepdim=True) if axes else g]


@register_vjp(ll.PadOp)
def pad_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    assert isinstance(op, ll.PadOp)
    low, size = ints(op.low), shape_of(op.input)
    return [b.shrink(g, low, tuple(lo + d for lo, d in zip(low, size, strict=True)))]


@register_vjp(ll.ShrinkOp)
def shrink_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    assert isinstance(op, ll.ShrinkOp)
    starts, limits, size = ints(op.starts), ints(op.limits), shape_of(op.input)
    return [b.pad(g, starts, tuple(d - e for d, e in zip(size, limits, strict=True)))]


@register_vjp(ll.FlipOp)
def flip_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    assert isinstance(op, ll.FlipOp)
    return [b.flip(g, ints(op.axes))]


@register_vjp(ll.StrideOp)
def stride_vjp(op: Operation, g: SSAValue, b: LLBuilder) -> Cotangents:
    """Each kept element gets its cotangent, the skipped ones zero: axis by axis,
    (m,) -> (m, 1) padded to (m, k) -> (m*k,) shrunk to the input's n."""
    assert isinstance(op, ll.StrideOp)
    size = shape_of(op.input)
    for axis, k in enumerate(ints(op.strides)):
        if k == 1:
            continue
        shape = shape_of(g)
        m = shape[axis]
        split = (*shape[:axis], m, 1, *shape[axis + 1:])
        high = [0] * len(split)
        high[axis + 1] = k - 1
        spread = b.pad(b.reshape(g, split), [0] * len(split), high)
        flat = b.reshape(spread, (*shape[:axis], m * k, *shape[axis + 1:]))
        limits = list(shape_of(flat))
        limits[axis] = size[axis]
        g = b.shrink(flat, [0] * len(limits), limits)
    return [g]
