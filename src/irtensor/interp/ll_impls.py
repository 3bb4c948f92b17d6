"""numpy implementations of the `ll` ops, and the helpers the `hl` ones share.

Values are numpy arrays. Every implementation computes in the element dtype
and returns through `result`, which casts to the result type's dtype and checks
the shape, so numpy's promotion rules never leak into the declared types.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from irtensor import dtypes
from irtensor.dialects import ll
from irtensor.dialects._base import element_of, ints

Array = np.ndarray
Values = PythonValues
Impl = Callable[[InterpreterFunctions, Interpreter, Operation, Values], Any]

# --------------------------------------------------------------------------- helpers


def shape_of_result(op: Operation) -> tuple[int, ...]:
    t = op.results[0].type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def result(op: Operation, value: Any) -> Values:
    """`value` as the op's one result: cast to the result dtype, shape checked."""
    t = op.results[0].type
    assert isinstance(t, TensorType)
    out = np.asarray(value, dtype=dtypes.to_numpy(t.element_type))
    if out.shape != shape_of_result(op):
        raise InterpretationError(f"'{op.name}' computed shape {out.shape}, its result type is {t}")
    return (out,)


def lowest(element: Attribute) -> float | int | bool:
    """The identity of max: -inf, the int minimum, or false."""
    if dtypes.is_float(element):
        return -math.inf
    if dtypes.is_bool(element):
        return False
    return int(np.iinfo(dtypes.to_numpy(element)).min)


def highest(element: Attribute) -> float | int | bool:
    """The identity of min: +inf, the int maximum, or true."""
    if dtypes.is_float(element):
        return math.inf
    if dtypes.is_bool(element):
        return True
    return int(np.iinfo(dtypes.to_numpy(element)).max)


def scalar_of(value: float, element: Attribute) -> Any:
    """A float property (a pad value) as one scalar of `element`.

    Floats convert directly. For ints and bool, -inf and +inf are the type's
    lowest and highest value (so a -inf pad never wins a max), NaN is 0, other
    values truncate towards zero and clamp to the type's range (bool: != 0).
    """
    dtype = dtypes.to_numpy(element)
    if dtypes.is_float(element):
        return dtype.type(value)
    if math.isinf(value):
        return dtype.type(lowest(element) if value < 0 else highest(element))
    if math.isnan(value):
        return dtype.type(0)
    if dtypes.is_bool(element):
        return dtype.type(value != 0)
    return dtype.type(min(max(int(value), lowest(element)), highest(element)))


# numpy reduces in memory order, so a view (a permute, an expand) would round a float sum
# or pick a max of 0.0 and -0.0 differently than a copy would. Reducing a row-major copy
# makes the result depend on the values alone, so rewrites that add or remove a view can
# be compared exactly.


def sum_of_equal(x: np.generic, n: int) -> np.generic:
    """The sum of n >= 1 copies of the float `x`: n * x rounded once.

    No order of adding does better, so this is what the interpreter gives for
    any sum of equal values and what `fold-constants` folds a sum of a constant
    to, however long (a sum of 2**40 ones is 2**40, not 2**24). Infinities and
    NaN stay themselves; zeros sum as numpy sums them (it starts from +0.0, so
    a sum of -0.0s is 0.0).
    """
    v = float(x)
    if not math.isfinite(v):
        return x
    if v == 0.0:
        return np.add.reduce(np.full((min(n, 8),), x, x.dtype))[()]
    return dtypes.rounded(Fraction(v) * n, x.dtype)


def all_equal_finite(x: Array) -> bool:
    """Every element is the same finite, non-zero float (0.0 and -0.0 add differently)."""
    if x.size == 0 or not dtypes.is_float(dtypes.from_numpy(x.dtype)):
        return False
    first = float(x.flat[0])
    if not math.isfinite(first) or first == 0.0:
        return False
    return all(stride == 0 for stride in x.strides) or bool((x == x.flat[0]).all())


def reduce_sum(x: Array, axes: tuple[int, ...], keepdims: bool) -> Any:
    """np.sum, pairwise for every output: numpy sums pairwise (error O(log n)) only along
    a contiguous axis and row by row along any other (O(n): a column of 2**24 ones would
    stop growing), so the reduced axes go last, into one contiguous axis of a copy.
    A sum of equal floats is exact (`sum_of_equal`)."""
    x = np.asarray(x)
    axes = tuple(sorted(a % x.ndim for a in axes)) if x.ndim else ()
    if not axes:
        return np.sum(np.array(x, order="C"), axis=axes, keepdims=keepdims, dtype=x.dtype)
    if all_equal_finite(x):
        total = sum_of_equal(x.flat[0], count(x.shape, axes))
        shape = [1 if a in axes else n for a, n in enumerate(x.shape) if keepdims or a not in axes]
        return np.full(shape, total, x.dtype)
    kept = [a for a in range(x.ndim) if a not in axes]
    rows = np.ascontiguousarray(np.transpose(x, [*kept, *axes]))
    rows = rows.reshape([x.shape[a] for a in kept] + [math.prod(x.shape[a] for a in axes)])
    total = np.add.reduce(rows, axis=-1, dtype=x.dtype)
    if keepdims:
        total = total.reshape([1 if a in axes else n for a, n in enumerate(x.shape)])
    return total


def reduce_max(x: Array, axes: tuple[int, ...], keepdims: bool, element: Attribute) -> Any:
    """np.max with the identity as `initial`, so no elements give -inf (int min, false)."""
    return np.max(np.array(x, order="C"), axis=axes, keepdims=keepdims,
                  initial=lowest(element))


def reduce_min(x: Array, axes: tuple[int, ...], keepdims: bool, element: Attribute) -> Any:
    return np.min(np.array(x, order="C"), axis=axes, keepdims=keepdims,
                  initial=highest(element))


def count(shape: Sequence[int], axes: Sequence[int]) -> int:
    """How many elements each reduction over `axes` of `shape` combines."""
    return math.prod(shape[a] for a in axes)


def pad(x: Array, low: Sequence[int], high: Sequence[int], value: Any) -> Array:
    if x.ndim == 0:  # np.pad rejects rank 0; there is nothing to pad
        return x
    return np.pad(x, list(zip(low, high, strict=True)), constant_values=value)


def elementwise(op_type: type[Operation], fn: Callable[..., Any]) -> Impl:
    """An `@impl` that applies `fn` to the operands and casts to the result type."""

    @impl(op_type)
    def run(
        self: InterpreterFunctions, interp: Interpreter, op: Operation, args: Values
    ) -> Values:
        return result(op, fn(*args))

    return run


def register_table(
    cls: type[InterpreterFunctions], table: dict[type[Operation], Callable[..., Any]]
) -> None:
    """Add one `elementwise` impl per table entry to `cls` (before `register_impls`)."""
    for op_type, fn in table.items():
        setattr(cls, f"run_{op_type.name.replace('.', '_')}", elementwise(op_type, fn))


# --------------------------------------------------------------------------- ll


LL_ELEMENTWISE: dict[type[Operation], Callable[..., Any]] = {
    ll.NegOp: np.negative,
    ll.Exp2Op: np.exp2,
    ll.Log2Op: np.log2,
    ll.SqrtOp: np.sqrt,
    ll.ReciprocalOp: np.reciprocal,
    ll.SinOp: np.sin,
    ll.AddOp: np.add,
    ll.MulOp: np.multiply,
    ll.MaxOp: np.maximum,
    ll.DivOp: np.true_divide,
    ll.IDivOp: np.floor_divide,
    ll.ModOp: np.remainder,
    ll.CmpLtOp: np.less,
    ll.CmpEqOp: np.equal,
    ll.WhereOp: np.where,
}


class LlFunctions(InterpreterFunctions):
    """The `ll` ops on numpy arrays."""

    @impl(ll.ConstOp)
    def run_const(self, interp: Interpreter, op: ll.ConstOp, args: Values) -> Values:
        dtype = dtypes.to_numpy(element_of(op.res))
        # a read-only broadcast of one element: a constant costs no memory, whatever its shape
        return result(op, np.broadcast_to(np.asarray(op.scalar, dtype), shape_of_result(op)))

    @impl(ll.CastOp)
    def run_cast(self, interp: Interpreter, op: ll.CastOp, args: Values) -> Values:
        return result(op, dtypes.cast_array(args[0], dtypes.to_numpy(element_of(op.res))))

    @impl(ll.ReduceOp)
    def run_reduce(self, interp: Interpreter, op: ll.ReduceOp, args: Values) -> Values:
        x, axes = args[0], ints(op.axes)
        if op.kind.data == ll.ReduceKind.SUM:
            return result(op, reduce_sum(x, axes, keepdims=True))
        return result(op, reduce_max(x, axes, keepdims=True, element=element_of(op.input)))

    @impl(ll.ReshapeOp)
    def run_reshape(self, interp: Interpreter, op: ll.ReshapeOp, args: Values) -> Values:
        return result(op, np.reshape(args[0], shape_of_result(op)))

    @impl(ll.PermuteOp)
    def run_permute(self, interp: Interpreter, op: ll.PermuteOp, args: Values) -> Values:
        return result(op, np.transpose(args[0], ints(op.perm)))

    @impl(ll.ExpandOp)
    def run_expand(self, interp: Interpreter, op: ll.ExpandOp, args: Values) -> Values:
        return result(op, np.broadcast_to(args[0], shape_of_result(op)).copy())

    @impl(ll.PadOp)
    def run_pad(self, interp: Interpreter, op: ll.PadOp, args: Values) -> Values:
        value = scalar_of(op.pad_value, element_of(op.input))
        return result(op, pad(args[0], ints(op.low), ints(op.high), value))

    @impl(ll.ShrinkOp)
    def run_shrink(self, interp: Interpreter, op: ll.ShrinkOp, args: Values) -> Values:
        index = tuple(slice(s, e) for s, e in zip(ints(op.starts), ints(op.limits), strict=True))
        return result(op, args[0][index])

    @impl(ll.FlipOp)
    def run_flip(self, interp: Interpreter, op: ll.FlipOp, args: Values) -> Values:
        return result(op, np.flip(args[0], axis=ints(op.axes)))

    @impl(ll.StrideOp)
    def run_stride(self, interp: Interpreter, op: ll.StrideOp, args: Values) -> Values:
        return result(op, args[0][tuple(slice(None, None, s) for s in ints(op.strides))])


register_table(LlFunctions, LL_ELEMENTWISE)
register_impls(LlFunctions)
