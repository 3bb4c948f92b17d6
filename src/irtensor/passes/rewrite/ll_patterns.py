"""Exact local rewrites of `ll` ops: identities and movement simplifications.

Every pattern here is exact: the rewritten program gives, under the reference
interpreter, the very same bits as before (NaN payloads aside, the one thing
the textual form cannot keep). They are each op's canonicalization patterns
(`get_canonicalization_patterns` in `ll.py` returns
`canonicalization_patterns(cls)`), so xDSL's `canonicalize` applies them, and
`fold-constants` applies them too, next to its constant evaluation.

- neg(neg x) -> x; cast to the same type -> x; a round trip through a wider
  type that holds every value (f16 -> f32 -> f16, i32 -> i64 -> i32) -> x
- x + (-0.0) -> x (x + 0.0 is not x for x = -0.0); integers: x + 0 -> x
- x * 1 -> x; integers: x * 0 -> 0
- max(x, x) -> x; max(x, lowest) -> x (lowest: -inf, the int minimum, false)
- integers: x idiv 1 -> x, x mod 1 -> 0, x idiv 0 -> 0, x mod 0 -> 0
- cmplt(x, x) -> false; integers and bools: cmpeq(x, x) -> true
- where(c, x, x) -> x; where(const c, a, b) -> a or b
- reduce over no elements -> its identity; max over one element -> x;
  integers: sum over one element -> x, reduce of reduce (same kind) -> one reduce
- movement of a constant -> a constant of the new shape (pad: only when the
  pad value is the constant's value)
- movement that moves nothing -> x; two movements of one kind -> one
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import TensorType, bf16, f16, f32, f64, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irtensor import dtypes
from irtensor.dialects import ll
from irtensor.dialects._base import element_of, ints, shape_of
from irtensor.interp.ll_impls import count, lowest, scalar_of

# --------------------------------------------------------------------------- constants


def const_op(value: SSAValue) -> ll.ConstOp | None:
    owner = value.owner
    return owner if isinstance(owner, ll.ConstOp) else None


def const_scalar(value: SSAValue) -> np.generic | None:
    """The element of constant `value`, in its dtype, as the interpreter's np.full makes it."""
    if (op := const_op(value)) is None:
        return None
    dtype = dtypes.to_numpy(element_of(value))
    try:
        with np.errstate(all="ignore"):
            return np.full((1,), op.scalar, dtype)[0]
    except (OverflowError, ValueError, TypeError):
        return None


def python_scalar(x: np.generic, element: Attribute) -> float | int | bool:
    if dtypes.is_float(element):
        return float(x)
    if dtypes.is_bool(element):
        return bool(x)
    return int(x)


def same_scalar(a: np.generic, b: np.generic) -> bool:
    """The same bits (so 0.0 is not -0.0), except that every NaN is the same as every NaN."""
    if np.dtype(a.dtype) != np.dtype(b.dtype):
        return False
    if math.isnan(float(a)) and math.isnan(float(b)):
        return True
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def make_const(scalar: np.generic, t: Attribute) -> ll.ConstOp | None:
    """An `ll.const` of type `t` whose element is exactly `scalar` (None if it cannot be)."""
    assert isinstance(t, TensorType)
    element = t.element_type
    op = ll.ConstOp(python_scalar(scalar, element), t)
    back = const_scalar(op.res)
    return op if back is not None and same_scalar(back, scalar) else None


def replace_by_scalar(
    op: Operation, scalar: float | int | bool | np.generic, rewriter: PatternRewriter
) -> None:
    """Replace `op` by a constant of its result type holding `scalar` (in its dtype)."""
    dtype = dtypes.to_numpy(element_of(op.results[0]))
    with np.errstate(all="ignore"):
        value = np.full((1,), scalar, dtype)[0]
    if (new := make_const(value, op.results[0].type)) is not None:
        rewriter.replace(op, new)


def is_const(value: SSAValue, test: Callable[[np.generic], bool]) -> bool:
    """`value` is a constant whose element passes `test`."""
    x = const_scalar(value)
    return x is not None and test(x)


def is_neg_zero(x: np.generic) -> bool:
    return float(x) == 0.0 and math.copysign(1.0, float(x)) < 0


def is_zero(x: np.generic) -> bool:
    return not math.isnan(float(x)) and float(x) == 0.0


def is_one(x: np.generic) -> bool:
    return float(x) == 1.0


def other_operand(op: Operation, test: Callable[[np.generic], bool]) -> SSAValue | None:
    """For a binary op with one constant operand passing `test`: the other operand."""
    lhs, rhs = op.operands
    if is_const(rhs, test):
        return lhs
    if is_const(lhs, test):
        return rhs
    return None


# --------------------------------------------------------------------------- unary


class NegNeg(RewritePattern):
    """neg(neg x) -> x: negation flips the sign bit (and wraps for ints), twice is nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.NegOp, rewriter: PatternRewriter) -> None:
        if isinstance(inner := op.input.owner, ll.NegOp):
            rewriter.replace(op, [], [inner.input])


# (from, to): every value of `from` is a value of `to`, and casting back gives it again.
def _int_widening(a: Attribute, b: Attribute) -> bool:
    """Every value of the integer type `a` is one of `b` (an integer type or a float with
    enough significand bits)."""
    if a == b:
        return False
    if dtypes.is_int(b):
        return bool(np.can_cast(dtypes.to_numpy(a), dtypes.to_numpy(b), "safe"))
    value_bits = dtypes.int_width(a) - (0 if dtypes.is_unsigned(a) else 1)
    return value_bits <= int(ml_dtypes.finfo(dtypes.to_numpy(b)).nmant) + 1


EXACT_WIDENING: frozenset[tuple[Attribute, Attribute]] = frozenset(
    {(f16, f32), (f16, f64), (bf16, f32), (bf16, f64), (f32, f64)}
    | {(i1, t) for t in dtypes.ELEMENT_TYPES if t != i1}
    | {(a, b) for a in dtypes.INT_TYPES for b in (*dtypes.INT_TYPES, *dtypes.FLOAT_TYPES)
       if _int_widening(a, b)}
)


class CastIdentity(RewritePattern):
    """cast to the same type -> x; cast(cast(x: A -> B) : B -> A) -> x when B holds all of A."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.CastOp, rewriter: PatternRewriter) -> None:
        if op.res.type == op.input.type:
            rewriter.replace(op, [], [op.input])
            return
        inner = op.input.owner
        if (
            isinstance(inner, ll.CastOp)
            and inner.input.type == op.res.type
            and (element_of(inner.input), element_of(inner.res)) in EXACT_WIDENING
        ):
            rewriter.replace(op, [], [inner.input])


# --------------------------------------------------------------------------- binary


class AddZero(RewritePattern):
    """x + (-0.0) -> x for floats (exact for every x, -0.0 and NaN included); x + 0 -> x for ints.

    x + 0.0 is left alone: it turns -0.0 into 0.0.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.AddOp, rewriter: PatternRewriter) -> None:
        zero = is_neg_zero if dtypes.is_float(element_of(op.res)) else is_zero
        if (x := other_operand(op, zero)) is not None:
            rewriter.replace(op, [], [x])


class MulOne(RewritePattern):
    """x * 1 -> x (exact for every x); for ints also x * 0 -> 0."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.MulOp, rewriter: PatternRewriter) -> None:
        if (x := other_operand(op, is_one)) is not None:
            rewriter.replace(op, [], [x])
        elif dtypes.is_int(element_of(op.res)) and other_operand(op, is_zero) is not None:
            replace_by_scalar(op, 0, rewriter)


class MaxIdentity(RewritePattern):
    """max(x, x) -> x; max(x, lowest) -> x (-inf, the int minimum, false: numpy keeps x)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.MaxOp, rewriter: PatternRewriter) -> None:
        if op.lhs == op.rhs:
            rewriter.replace(op, [], [op.lhs])
            return
        least = lowest(element_of(op.res))
        if (x := other_operand(op, lambda c: bool(c == least))) is not None:
            rewriter.replace(op, [], [x])


class DivOne(RewritePattern):
    """x / 1 -> x (exact for every x, NaN included)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.DivOp, rewriter: PatternRewriter) -> None:
        if is_const(op.rhs, is_one):
            rewriter.replace(op, [], [op.lhs])


class IntDivisionIdentity(RewritePattern):
    """x idiv 1 -> x; x mod 1 -> 0; x idiv 0 -> 0 and x mod 0 -> 0 (numpy's results)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.IDivOp | ll.ModOp, rewriter: PatternRewriter) -> None:
        divisor = const_scalar(op.rhs)
        if divisor is None or int(divisor) not in (0, 1):
            return
        if int(divisor) == 1 and isinstance(op, ll.IDivOp):
            rewriter.replace(op, [], [op.lhs])
        else:
            replace_by_scalar(op, 0, rewriter)


class CompareSame(RewritePattern):
    """cmplt(x, x) -> false (NaN < NaN is false too); cmpeq(x, x) -> true for ints and bools."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.CmpLtOp | ll.CmpEqOp, rewriter: PatternRewriter) -> None:
        if op.lhs != op.rhs:
            return
        if isinstance(op, ll.CmpLtOp):
            replace_by_scalar(op, False, rewriter)
        elif not dtypes.is_float(element_of(op.lhs)):
            replace_by_scalar(op, True, rewriter)


class WhereIdentity(RewritePattern):
    """where(c, x, x) -> x; where(true, a, b) -> a; where(false, a, b) -> b."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.WhereOp, rewriter: PatternRewriter) -> None:
        if op.lhs == op.rhs:
            rewriter.replace(op, [], [op.lhs])
        elif (c := const_scalar(op.cond)) is not None:
            rewriter.replace(op, [], [op.lhs if bool(c) else op.rhs])


# --------------------------------------------------------------------------- reduce


class ReduceIdentity(RewritePattern):
    """Reductions that need no arithmetic.

    Over no elements: the identity (sum 0, max lowest), whatever the input.
    Over one element: max(lowest, x) is x; an int sum is x (a float sum is not:
    numpy's sum of [-0.0] is 0.0). Integers and bools: reduce(reduce x) of one
    kind is one reduce over both axis sets (exact, wrapping sums included).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.ReduceOp, rewriter: PatternRewriter) -> None:
        element, axes = element_of(op.input), ints(op.axes)
        is_max = op.kind.data == ll.ReduceKind.MAX
        n = count(shape_of(op.input), axes)
        if n == 0:
            replace_by_scalar(op, lowest(element) if is_max else 0, rewriter)
        elif n == 1 and (is_max or not dtypes.is_float(element)):
            rewriter.replace(op, [], [op.input])
        elif (
            not dtypes.is_float(element)
            and isinstance(inner := op.input.owner, ll.ReduceOp)
            and inner.kind.data == op.kind.data
        ):
            merged = tuple(sorted(set(axes) | set(ints(inner.axes))))
            rewriter.replace(op, ll.ReduceOp(op.kind.data, inner.input, merged))


# --------------------------------------------------------------------------- movement


def pads_with(op: ll.PadOp, scalar: np.generic) -> bool:
    """The pad value, converted to the element type as the interpreter does, is `scalar`."""
    value = scalar_of(op.pad_value, element_of(op.input))
    return same_scalar(np.asarray(value)[()], scalar)


class MovementOfConst(RewritePattern):
    """Moving a constant gives the constant, in the new shape (pad: only with its own value)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.MovementOp, rewriter: PatternRewriter) -> None:
        if (c := const_op(op.input)) is None:
            return
        if isinstance(op, ll.PadOp):
            x = const_scalar(op.input)
            if x is None or not pads_with(op, x):
                return
        new = ll.ConstOp.create(properties={"value": c.value}, result_types=[op.res.type])
        rewriter.replace(op, new)


def _identity(op: ll.MovementOp) -> bool:
    """The movement leaves every element where it is."""
    shape = shape_of(op.input)
    if isinstance(op, ll.ReshapeOp | ll.ExpandOp):
        return shape_of(op.res) == shape
    if isinstance(op, ll.PermuteOp):
        return ints(op.perm) == tuple(range(len(shape)))
    if isinstance(op, ll.PadOp):
        return not any(ints(op.low)) and not any(ints(op.high))
    if isinstance(op, ll.ShrinkOp):
        return not any(ints(op.starts)) and ints(op.limits) == shape
    if isinstance(op, ll.FlipOp):
        return all(shape[a] <= 1 for a in ints(op.axes))
    if isinstance(op, ll.StrideOp):
        return all(s == 1 or d <= 1 for s, d in zip(ints(op.strides), shape, strict=True))
    return False


class MovementIdentity(RewritePattern):
    """Reshape or expand to the same shape, permute by the identity, pad by nothing,
    shrink to the full range, flip of axes of size <= 1, stride 1 -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.MovementOp, rewriter: PatternRewriter) -> None:
        if _identity(op):
            rewriter.replace(op, [], [op.input])


def _compose(outer: ll.MovementOp, inner: ll.MovementOp) -> Operation | None:
    """One op of the same kind doing `inner` then `outer`, or None."""
    x = inner.input
    if isinstance(outer, ll.ReshapeOp) and isinstance(inner, ll.ReshapeOp):
        return ll.ReshapeOp(x, shape_of(outer.res))
    if isinstance(outer, ll.ExpandOp) and isinstance(inner, ll.ExpandOp):
        return ll.ExpandOp(x, shape_of(outer.res))
    if isinstance(outer, ll.PermuteOp) and isinstance(inner, ll.PermuteOp):
        first = ints(inner.perm)
        return ll.PermuteOp(x, tuple(first[p] for p in ints(outer.perm)))
    if isinstance(outer, ll.FlipOp) and isinstance(inner, ll.FlipOp):
        return ll.FlipOp(x, tuple(sorted(set(ints(outer.axes)) ^ set(ints(inner.axes)))))
    if isinstance(outer, ll.StrideOp) and isinstance(inner, ll.StrideOp):
        pairs = zip(ints(inner.strides), ints(outer.strides), strict=True)
        return ll.StrideOp(x, tuple(a * b for a, b in pairs))
    if isinstance(outer, ll.ShrinkOp) and isinstance(inner, ll.ShrinkOp):
        starts = tuple(a + b for a, b in zip(ints(inner.starts), ints(outer.starts), strict=True))
        limits = tuple(a + b for a, b in zip(ints(inner.starts), ints(outer.limits), strict=True))
        return ll.ShrinkOp(x, starts, limits)
    if isinstance(outer, ll.PadOp) and isinstance(inner, ll.PadOp):
        element = element_of(x)
        value = np.asarray(scalar_of(inner.pad_value, element))[()]
        if pads_with(outer, value):
            low = tuple(a + b for a, b in zip(ints(inner.low), ints(outer.low), strict=True))
            high = tuple(a + b for a, b in zip(ints(inner.high), ints(outer.high), strict=True))
            return ll.PadOp(x, low, high, outer.pad_value)
    return None


class ComposeMovement(RewritePattern):
    """Two movements of one kind -> one: reshape(reshape), permute(permute) (perms
    composed), expand(expand), flip(flip) (axes xor), stride(stride) (products),
    shrink(shrink) (offsets added), pad(pad) with the same value (sizes added)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.MovementOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, ll.MovementOp) and (new := _compose(op, inner)) is not None:
            rewriter.replace(op, new)


# --------------------------------------------------------------------------- per op

_MOVEMENT = (MovementOfConst(), MovementIdentity(), ComposeMovement())
_BY_OP: dict[type[Operation], tuple[RewritePattern, ...]] = {
    ll.NegOp: (NegNeg(),),
    ll.CastOp: (CastIdentity(),),
    ll.AddOp: (AddZero(),),
    ll.MulOp: (MulOne(),),
    ll.MaxOp: (MaxIdentity(),),
    ll.DivOp: (DivOne(),),
    ll.IDivOp: (IntDivisionIdentity(),),
    ll.ModOp: (IntDivisionIdentity(),),
    ll.CmpLtOp: (CompareSame(),),
    ll.CmpEqOp: (CompareSame(),),
    ll.WhereOp: (WhereIdentity(),),
    ll.ReduceOp: (ReduceIdentity(),),
    **{movement: _MOVEMENT for movement in ll.MOVEMENT_OPS},
}


def canonicalization_patterns(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The exact rewrites of one `ll` op type (what its `get_canonicalization_patterns` gives)."""
    return _BY_OP.get(op_type, ())


ll.register_canonicalization(_BY_OP)


def all_patterns() -> list[RewritePattern]:
    """Every pattern of this module once, for a pass that applies them all."""
    unique: dict[int, RewritePattern] = {}
    for patterns in _BY_OP.values():
        for p in patterns:
            unique.setdefault(id(p), p)
    return list(unique.values())
