"""The `fold-constants` pass: evaluate `ll` ops on constants, apply exact identities.

Constants are scalars broadcast to a shape (`ll.const 2.5 : tensor<4x4xf32>`),
so every fold here computes one element and builds one `ll.const`; no literal
array is ever made. Each fold is exact: the element is computed with the same
numpy function, in the same dtype, as the reference interpreter computes it
(`irtensor.interp.ll_impls`; a sum of a constant is n * c rounded once, as the
interpreter sums equal values), and a fold whose result the interpreter could
give differently (a float-to-int cast of NaN) is not made. The identities are
`irtensor.passes.rewrite.ll_patterns`, which are also the ops' canonicalization
patterns. `fast-math=true` adds rewrites that are only
approximately right (NaN, inf and the sign of zero may change).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irtensor import dtypes
from irtensor.dialects import ll
from irtensor.dialects._base import element_of, ints, shape_of
from irtensor.interp.ll_impls import LL_ELEMENTWISE, count, sum_of_equal
from irtensor.passes import trace
from irtensor.passes.registry import register_pass
from irtensor.passes.rewrite.ll_patterns import (
    all_patterns,
    const_scalar,
    is_zero,
    other_operand,
    replace_by_scalar,
)

ELEMENTWISE_OPS: tuple[type[Operation], ...] = (
    *ll.UNARY_OPS, *ll.BINARY_OPS, *ll.COMPARE_OPS, ll.WhereOp, ll.CastOp,
)
ALL_OPS: tuple[type[Operation], ...] = tuple(ll.LL.operations)

# --------------------------------------------------------------------------- evaluation


def cast_scalar(x: np.generic, to: np.dtype) -> np.generic | None:
    """`x.astype(to)` as the interpreter casts; None where numpy's result is not defined
    (a float that is NaN, infinite or out of range cast to an integer)."""
    source = np.full((1,), x, x.dtype)
    if np.issubdtype(to, np.integer) and x.dtype.kind not in "iub":
        v = float(x)
        info = np.iinfo(to)
        if not math.isfinite(v) or not info.min <= math.trunc(v) <= info.max:
            return None
    with np.errstate(all="ignore"):
        return dtypes.cast_array(source, to)[0]


def evaluate(op: Operation) -> np.generic | None:
    """The element of an elementwise op on constants, as the interpreter computes it.

    numpy runs on one-element arrays of the operands' dtypes (the very ufunc
    loops the interpreter runs on whole arrays) and the result is cast to the
    result's dtype, as the interpreter's `result` does.
    """
    args = [const_scalar(v) for v in op.operands]
    if any(a is None for a in args):
        return None
    to = dtypes.to_numpy(element_of(op.results[0]))
    if isinstance(op, ll.CastOp):
        return cast_scalar(args[0], to)  # type: ignore[arg-type]
    arrays = [np.full((1,), a, a.dtype) for a in args]  # type: ignore[union-attr]
    with np.errstate(all="ignore"):
        return np.asarray(LL_ELEMENTWISE[type(op)](*arrays), dtype=to)[0]


def reduce_of_const(op: ll.ReduceOp) -> np.generic | None:
    """The element of a reduce of a constant over n >= 1 elements, or None.

    A float sum is n * c rounded once, as the interpreter sums equal values
    (`sum_of_equal`): exact, and no slower for 2**40 elements than for 4.
    """
    x = const_scalar(op.input)
    n = count(shape_of(op.input), ints(op.axes))
    if x is None or n == 0:
        return None
    if op.kind.data == ll.ReduceKind.MAX:
        return x
    if not dtypes.is_float(element_of(op.input)):
        bits = x.dtype.itemsize * 8
        half = 0 if x.dtype.kind == "u" else 2 ** (bits - 1)  # unsigned: no negative half
        wrapped = (n * int(x) + half) % 2**bits - half
        return np.asarray(wrapped, dtype=x.dtype)[()]
    return sum_of_equal(x, n)


# --------------------------------------------------------------------------- patterns


class FoldElementwise(RewritePattern):
    """An elementwise op (unary, binary, compare, where, cast) on constants -> a constant."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, ELEMENTWISE_OPS) and (value := evaluate(op)) is not None:
            replace_by_scalar(op, value, rewriter)


class FoldReduce(RewritePattern):
    """A reduce of a constant -> a constant: max is the constant, sum is n * c rounded once."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.ReduceOp, rewriter: PatternRewriter) -> None:
        if (value := reduce_of_const(op)) is not None:
            replace_by_scalar(op, value, rewriter)


class FoldEmpty(RewritePattern):
    """An op whose result has no elements -> a constant (there is nothing to compute)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ALL_OPS) or isinstance(op, ll.ConstOp):
            return
        t = op.results[0].type
        if isinstance(t, TensorType) and math.prod(t.get_shape()) == 0:
            replace_by_scalar(op, 0, rewriter)


class FastAddZero(RewritePattern):
    """fast-math: x + 0.0 -> x (wrong only for x = -0.0)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.AddOp, rewriter: PatternRewriter) -> None:
        if dtypes.is_float(element_of(op.res)) and (x := other_operand(op, is_zero)) is not None:
            rewriter.replace(op, [], [x])


class FastMulZero(RewritePattern):
    """fast-math: x * 0.0 -> 0.0 (wrong for NaN and inf, and for the sign of zero)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.MulOp, rewriter: PatternRewriter) -> None:
        if dtypes.is_float(element_of(op.res)) and other_operand(op, is_zero) is not None:
            replace_by_scalar(op, 0.0, rewriter)


class FastReciprocalReciprocal(RewritePattern):
    """fast-math: reciprocal(reciprocal x) -> x (1/(1/x) rounds twice, and 1/tiny overflows)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.ReciprocalOp, rewriter: PatternRewriter) -> None:
        if isinstance(inner := op.input.owner, ll.ReciprocalOp):
            rewriter.replace(op, [], [inner.input])


def fold_patterns(fast_math: bool = False) -> list[RewritePattern]:
    """The patterns of `fold-constants`, in the order they are tried on each op."""
    patterns: list[RewritePattern] = [FoldEmpty(), FoldElementwise(), FoldReduce()]
    patterns += all_patterns()
    if fast_math:
        patterns += [FastAddZero(), FastMulZero(), FastReciprocalReciprocal()]
    return patterns


@register_pass
@dataclass(frozen=True)
class FoldConstants(ModulePass):
    """fold-constants: evaluate ll ops on constants and apply exact algebraic identities.

    Ops left without uses are erased, as `canonicalize` does. Option:
    `fast-math=true` also folds x + 0.0 -> x, x * 0.0 -> 0.0,
    and reciprocal(reciprocal x) -> x.
    """

    name = "fold-constants"
    fast_math: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        trace.rewrite_module(op, fold_patterns(self.fast_math))
