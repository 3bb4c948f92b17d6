"""numpy implementations of the `hl` ops.

Elementwise ops broadcast as numpy does. Each implementation is plain numpy in
the element dtype; `result` casts to the declared result type and checks its
shape. conv2d and the pools are written as loops over the kernel taps, each tap
a strided slice of the padded input.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation

from irtensor import dtypes
from irtensor.dialects import hl
from irtensor.dialects._base import element_of, ints
from irtensor.interp.ll_impls import (
    Array,
    Values,
    count,
    pad,
    reduce_max,
    reduce_min,
    reduce_sum,
    register_table,
    result,
    scalar_of,
    shape_of_result,
)


def _relu(x: Array) -> Array:
    return np.maximum(x, np.zeros((), x.dtype))


def _rsqrt(x: Array) -> Array:
    return np.reciprocal(np.sqrt(x))


def array_power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's elementwise array power (C99's special cases: (-inf) ** 0.5 is inf). numpy
    takes another path for a 0-d operand or one broadcast from a single element (x ** 0.5
    as a square root) that gives nan there, so both go in as whole arrays of the result's
    shape."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    x, y = (np.broadcast_to(np.atleast_1d(v), shape or (1,)).copy() for v in (a, b))
    return np.power(x, y).reshape(shape)


def _sigmoid(x: Array) -> Array:
    return np.reciprocal(np.ones((), x.dtype) + np.exp(np.negative(x)))


HL_ELEMENTWISE: dict[type[Operation], Callable[..., Any]] = {
    hl.NegOp: np.negative,
    hl.AbsOp: np.abs,
    hl.ReluOp: _relu,
    hl.ExpOp: np.exp,
    hl.Exp2Op: np.exp2,
    hl.LogOp: np.log,
    hl.Log2Op: np.log2,
    hl.SqrtOp: np.sqrt,
    hl.RsqrtOp: _rsqrt,
    hl.ReciprocalOp: np.reciprocal,
    hl.SinOp: np.sin,
    hl.CosOp: np.cos,
    hl.SigmoidOp: _sigmoid,
    hl.TanhOp: np.tanh,
    hl.NotOp: np.logical_not,
    hl.AddOp: np.add,
    hl.SubOp: np.subtract,
    hl.MulOp: np.multiply,
    hl.DivOp: np.true_divide,
    hl.PowOp: array_power,
    hl.MaximumOp: np.maximum,
    hl.MinimumOp: np.minimum,
    hl.IDivOp: np.floor_divide,
    hl.ModOp: np.remainder,
    hl.AndOp: np.logical_and,
    hl.OrOp: np.logical_or,
    hl.XorOp: np.logical_xor,
    hl.LtOp: np.less,
    hl.LeOp: np.less_equal,
    hl.GtOp: np.greater,
    hl.GeOp: np.greater_equal,
    hl.EqOp: np.equal,
    hl.NeOp: np.not_equal,
    hl.WhereOp: np.where,
}


# --------------------------------------------------------------------------- helpers

HALVES = (np.dtype(np.float16), dtypes.to_numpy(dtypes.bf16))


def _in_f32(define: Callable[..., Any]) -> Callable[..., Any]:
    """f16 and bf16 computed in f32 and rounded once: sums, means, variances, softmax and
    the norms accumulate as torch and tinygrad (and the compiled code) do."""

    @functools.wraps(define)
    def run(x: Array, *params: Any, **options: Any) -> Any:
        if x.dtype not in HALVES:
            return define(x, *params, **options)
        return np.asarray(define(x.astype(np.float32), *params, **options)).astype(x.dtype)

    return run


_sum = _in_f32(reduce_sum)


@_in_f32
def _mean(x: Array, axes: tuple[int, ...], keepdims: bool) -> Any:
    """sum / n in the element dtype; n = 0 gives NaN."""
    return reduce_sum(x, axes, keepdims) / x.dtype.type(count(x.shape, axes))


@_in_f32
def _var(x: Array, axes: tuple[int, ...], keepdims: bool, correction: int,
         corrected: bool = True) -> Any:
    """(sum(d^2) - sum(d)^2 / n) / (n - correction) with d = x - mean: the corrected
    two-pass formula, which takes the mean's rounding error out (`corrected=False`:
    sum(d^2) alone, as the norms have it); a divisor below 0 counts as 0, as np.var."""
    d = x - _mean(x, axes, keepdims=True)
    squares = reduce_sum(d * d, axes, keepdims)
    with np.errstate(invalid="ignore", divide="ignore"):
        if corrected:
            total = reduce_sum(d, axes, keepdims)
            fix = total * total / x.dtype.type(count(x.shape, axes))
            # a fix that overflows (so does sum(d^2)) must leave inf, not make inf - inf
            squares = squares - np.minimum(fix, np.finfo(x.dtype).max)
        return squares / x.dtype.type(max(count(x.shape, axes) - correction, 0))


@_in_f32
def _normalize(x: Array, axes: tuple[int, ...], eps: float) -> Array:
    """(x - mean) / sqrt(biased var + eps), statistics over `axes`."""
    d = x - _mean(x, axes, keepdims=True)
    var = _var(x, axes, True, 0, False)
    return d / np.sqrt(var + x.dtype.type(eps))


def _taps(
    x: Array, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int]
) -> list[tuple[int, int, Array]]:
    """(i, j, window) per kernel tap: the strided slice of the last two axes of the
    (already padded) `x` that kernel element (i, j) meets, one per output position."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    oh = (x.shape[-2] - dh * (kh - 1) - 1) // sh + 1
    ow = (x.shape[-1] - dw * (kw - 1) - 1) // sw + 1
    taps = []
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
            cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
            taps.append((i, j, x[..., rows, cols]))
    return taps


def _pad_hw(x: Array, padding: Sequence[int], value: Any) -> Array:
    """Pad the last two axes by [top, left, bottom, right]."""
    top, left, bottom, right = padding
    lead = [0] * (x.ndim - 2)
    return pad(x, [*lead, top, left], [*lead, bottom, right], value)


def _conv2d(
    x: Array, w: Array, strides: Sequence[int], padding: Sequence[int],
    dilations: Sequence[int], groups: int, shape: tuple[int, ...],
) -> Array:
    """torch's conv2d (cross-correlation), accumulating one tap at a time per group
    (f16 and bf16 operands widened to f32: exact products, summed in f32, rounded once)."""
    xp = _pad_hw(x, padding, x.dtype.type(0))
    out = np.zeros(shape, np.float32 if x.dtype in HALVES else x.dtype)
    xp, w = (v.astype(out.dtype, copy=False) for v in (xp, w))
    cg, og = w.shape[1], w.shape[0] // groups
    for g in range(groups):
        xg, wg = xp[:, g * cg : (g + 1) * cg], w[g * og : (g + 1) * og]
        for i, j, window in _taps(xg, w.shape[2:], strides, dilations):
            # window (N, 1, Cg, OH, OW) * weights (1, Og, Cg, 1, 1), summed over Cg.
            # Plain products, not BLAS, which skips zero factors and so loses NaN/inf.
            products = window[:, None] * wg[None, :, :, i, j, None, None]
            out[:, g * og : (g + 1) * og] += products.sum(axis=2, dtype=out.dtype)
    return out.astype(x.dtype, copy=False)


@_in_f32
def _softmax(x: Array, axis: int) -> Array:
    e = np.exp(x - reduce_max(x, (axis,), True, dtypes.from_numpy(x.dtype)))
    return e / reduce_sum(e, (axis,), True)


@_in_f32
def _log_softmax(x: Array, axis: int) -> Array:
    shifted = x - reduce_max(x, (axis,), True, dtypes.from_numpy(x.dtype))
    return shifted - np.log(reduce_sum(np.exp(shifted), (axis,), True))


def _matmul(a: Array, b: Array) -> Array:
    """np.matmul; f16 and bf16 operands widened to f32 (exact products), summed in f32."""
    if a.dtype not in HALVES:
        return np.matmul(a, b)
    x = (a[..., None, :] if a.ndim == 1 else a).astype(np.float32)
    y = (b[:, None] if b.ndim == 1 else b).astype(np.float32)
    products = x[..., :, :, None] * y[..., None, :, :]  # (.., n, k, m), exact in f32
    out = reduce_sum(products, (products.ndim - 2,), False).astype(a.dtype)
    if a.ndim == 1:
        out = out[..., 0, :]
    return out[..., 0] if b.ndim == 1 else out


class HlFunctions(InterpreterFunctions):
    """The `hl` ops on numpy arrays."""

    @impl(hl.CastOp)
    def run_cast(self, interp: Interpreter, op: hl.CastOp, args: Values) -> Values:
        return result(op, dtypes.cast_array(args[0], dtypes.to_numpy(element_of(op.res))))

    # ----------------------------------------------------------------------- reductions

    @impl(hl.SumOp)
    def run_sum(self, interp: Interpreter, op: hl.SumOp, args: Values) -> Values:
        return result(op, _sum(args[0], ints(op.axes), op.keepdim is not None))

    @impl(hl.MaxOp)
    def run_max(self, interp: Interpreter, op: hl.MaxOp, args: Values) -> Values:
        keep, element = op.keepdim is not None, element_of(op.input)
        return result(op, reduce_max(args[0], ints(op.axes), keep, element))

    @impl(hl.MinOp)
    def run_min(self, interp: Interpreter, op: hl.MinOp, args: Values) -> Values:
        keep, element = op.keepdim is not None, element_of(op.input)
        return result(op, reduce_min(args[0], ints(op.axes), keep, element))

    @impl(hl.MeanOp)
    def run_mean(self, interp: Interpreter, op: hl.MeanOp, args: Values) -> Values:
        return result(op, _mean(args[0], ints(op.axes), op.keepdim is not None))

    @impl(hl.VarOp)
    def run_var(self, interp: Interpreter, op: hl.VarOp, args: Values) -> Values:
        keep, correction = op.keepdim is not None, op.correction.value.data
        return result(op, _var(args[0], ints(op.axes), keep, correction))

    # ----------------------------------------------------------------------- movement

    @impl(hl.ReshapeOp)
    def run_reshape(self, interp: Interpreter, op: hl.ReshapeOp, args: Values) -> Values:
        return result(op, np.reshape(args[0], shape_of_result(op)))

    @impl(hl.PermuteOp)
    def run_permute(self, interp: Interpreter, op: hl.PermuteOp, args: Values) -> Values:
        return result(op, np.transpose(args[0], ints(op.perm)))

    @impl(hl.BroadcastToOp)
    def run_broadcast_to(
        self, interp: Interpreter, op: hl.BroadcastToOp, args: Values
    ) -> Values:
        return result(op, np.broadcast_to(args[0], shape_of_result(op)).copy())

    @impl(hl.PadOp)
    def run_pad(self, interp: Interpreter, op: hl.PadOp, args: Values) -> Values:
        value = scalar_of(op.pad_value, element_of(op.input))
        return result(op, pad(args[0], ints(op.low), ints(op.high), value))

    @impl(hl.SliceOp)
    def run_slice(self, interp: Interpreter, op: hl.SliceOp, args: Values) -> Values:
        bounds = zip(ints(op.starts), ints(op.limits), ints(op.steps), strict=True)
        return result(op, args[0][tuple(slice(s, e, k) for s, e, k in bounds)])

    @impl(hl.FlipOp)
    def run_flip(self, interp: Interpreter, op: hl.FlipOp, args: Values) -> Values:
        return result(op, np.flip(args[0], axis=ints(op.axes)))

    @impl(hl.ConcatOp)
    def run_concat(self, interp: Interpreter, op: hl.ConcatOp, args: Values) -> Values:
        return result(op, np.concatenate(args, axis=op.axis.value.data))

    # ----------------------------------------------------------------------- nn

    @impl(hl.MatmulOp)
    def run_matmul(self, interp: Interpreter, op: hl.MatmulOp, args: Values) -> Values:
        return result(op, _matmul(args[0], args[1]))

    @impl(hl.Conv2dOp)
    def run_conv2d(self, interp: Interpreter, op: hl.Conv2dOp, args: Values) -> Values:
        x, w = args
        params = ints(op.strides), ints(op.padding), ints(op.dilations), op.groups.value.data
        return result(op, _conv2d(x, w, *params, shape=shape_of_result(op)))

    @impl(hl.MaxPool2dOp)
    def run_max_pool2d(self, interp: Interpreter, op: hl.MaxPool2dOp, args: Values) -> Values:
        xp = _pad_hw(args[0], ints(op.padding), args[0].dtype.type(-math.inf))
        windows = [t for _, _, t in _taps(xp, ints(op.kernel), ints(op.strides), (1, 1))]
        return result(op, functools.reduce(np.maximum, windows))

    @impl(hl.AvgPool2dOp)
    def run_avg_pool2d(self, interp: Interpreter, op: hl.AvgPool2dOp, args: Values) -> Values:
        x, kernel = args[0], ints(op.kernel)
        xp = _pad_hw(x, ints(op.padding), x.dtype.type(0))
        windows = [t for _, _, t in _taps(xp, kernel, ints(op.strides), (1, 1))]
        wide = np.float32 if x.dtype in HALVES else x.dtype  # a half sum accumulates in f32
        total = functools.reduce(np.add, [w.astype(wide) for w in windows]).astype(x.dtype)
        return result(op, total / x.dtype.type(math.prod(kernel)))

    @impl(hl.SoftmaxOp)
    def run_softmax(self, interp: Interpreter, op: hl.SoftmaxOp, args: Values) -> Values:
        return result(op, _softmax(args[0], op.axis.value.data))

    @impl(hl.LogSoftmaxOp)
    def run_log_softmax(self, interp: Interpreter, op: hl.LogSoftmaxOp, args: Values) -> Values:
        return result(op, _log_softmax(args[0], op.axis.value.data))

    @impl(hl.LayerNormOp)
    def run_layer_norm(self, interp: Interpreter, op: hl.LayerNormOp, args: Values) -> Values:
        return result(op, _normalize(args[0], ints(op.axes), op.eps.value.data))

    @impl(hl.BatchNormOp)
    def run_batch_norm(self, interp: Interpreter, op: hl.BatchNormOp, args: Values) -> Values:
        x = args[0]
        axes = tuple(a for a in range(x.ndim) if a != 1)
        return result(op, _normalize(x, axes, op.eps.value.data))

    @impl(hl.GroupNormOp)
    def run_group_norm(self, interp: Interpreter, op: hl.GroupNormOp, args: Values) -> Values:
        x, groups = args[0], op.groups.value.data
        rows = x.reshape(x.shape[0], groups, math.prod(x.shape[1:]) // groups)
        return result(op, _normalize(rows, (2,), op.eps.value.data).reshape(x.shape))


register_table(HlFunctions, HL_ELEMENTWISE)
register_impls(HlFunctions)
