"""The fuzzer's check of the interpreter itself: each float `hl` op against numpy in float64.

The interpreter runs the program once with every value returned; each op
whose operands or result are floats is recomputed from the interpreter's own
operand values in float64, written here independently of `irtensor.interp`,
and the interpreter's result must lie within an error bound of it: half an
ulp or a few for one rounding, and for sums, products and statistics the
classic bound of `n` roundings of the summed magnitudes. NaN must be where
float64 has it, infinities too unless the low-precision type could
legitimately overflow on the way. Integer and bool ops are left out: numpy
in float64 says nothing new about them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, Region, SSAValue

from irtensor import dtypes, interp
from irtensor.dialects import hl, ll
from irtensor.dialects._base import element_of, ints, shape_of
from irtensor.interp.hl_impls import array_power

F64 = np.dtype(np.float64)
Result = tuple[np.ndarray, np.ndarray]  # float64 value and absolute error bound
Reference = Callable[[Operation, list[np.ndarray], "Limits"], Result]


class Limits:
    """The rounding unit, tiniest normal and largest finite value of a float type."""

    def __init__(self, dtype: np.dtype):
        info = ml_dtypes.finfo(dtype)
        self.eps, self.tiny, self.max = float(info.eps), float(info.smallest_normal), float(
            info.max)

    def accumulated(self, magnitude: np.ndarray, n: int) -> np.ndarray:
        """The error of combining `n` terms of summed size `magnitude` (and of rounding a
        result below the tiniest normal: subnormals are spaced absolutely); infinite where
        the sum could overflow the type (then any result is right)."""
        bound = (n + 2) * self.eps * magnitude + self.tiny
        return np.where(magnitude >= self.max, np.inf, bound)


def finite(x: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(x), np.abs(x), 0.0)


# --------------------------------------------------------------------------- elementwise


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# Each unary float op: its float64 function and how many roundings it may be off.
UNARY: dict[type[Operation], tuple[Callable[[np.ndarray], np.ndarray], float]] = {
    hl.NegOp: (np.negative, 0), hl.AbsOp: (np.abs, 0), hl.ReluOp: (lambda x: np.maximum(x, 0), 0),
    hl.ExpOp: (np.exp, 4), hl.Exp2Op: (np.exp2, 4), hl.LogOp: (np.log, 4),
    hl.Log2Op: (np.log2, 4), hl.SqrtOp: (np.sqrt, 1), hl.RsqrtOp: (lambda x: 1 / np.sqrt(x), 3),
    hl.ReciprocalOp: (np.reciprocal, 1), hl.SinOp: (np.sin, 4), hl.CosOp: (np.cos, 4),
    hl.SigmoidOp: (_sigmoid, 6), hl.TanhOp: (np.tanh, 4),
}
BINARY: dict[type[Operation], tuple[Callable[..., np.ndarray], float]] = {
    hl.AddOp: (np.add, 1), hl.SubOp: (np.subtract, 1), hl.MulOp: (np.multiply, 1),
    hl.DivOp: (np.divide, 1), hl.PowOp: (array_power, 4), hl.MaximumOp: (np.maximum, 0),
    hl.MinimumOp: (np.minimum, 0), hl.LtOp: (np.less, 0), hl.LeOp: (np.less_equal, 0),
    hl.GtOp: (np.greater, 0), hl.GeOp: (np.greater_equal, 0), hl.EqOp: (np.equal, 0),
    hl.NeOp: (np.not_equal, 0),
}


def _rounded(want: np.ndarray, roundings: float, lim: Limits) -> Result:
    return want, roundings * lim.eps * finite(want) + (lim.tiny if roundings else 0.0)


def _cast(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
    """Floats to ints as x86 converts them (`dtypes.float_to_int`: truncated in range;
    NaN, infinities and out-of-range values as `cvttss2si` gives them)."""
    x, target = args[0], element_of(op.results[0])
    if dtypes.is_bool(target):
        return (x != 0).astype(F64), np.zeros(x.shape)
    if dtypes.is_int(target) and dtypes.is_float(element_of(op.operands[0])):
        with np.errstate(invalid="ignore", over="ignore"):
            converted = dtypes.float_to_int(np.asarray(x, F64), dtypes.to_numpy(target))
        return converted.astype(F64), np.zeros(x.shape)
    return _rounded(x, 1, lim)


# --------------------------------------------------------------------------- reductions


def _keep(op: Operation) -> tuple[tuple[int, ...], bool]:
    return ints(op.axes), op.keepdim is not None  # type: ignore[attr-defined]


def _count(x: np.ndarray, axes: Sequence[int]) -> int:
    return math.prod(x.shape[a] for a in axes)


def _sum(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
    (x,), (axes, keep) = args, _keep(op)
    want = np.sum(x, axis=axes, keepdims=keep)
    return want, lim.accumulated(np.sum(finite(x), axis=axes, keepdims=keep), _count(x, axes))


def _extreme(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
    """max/min: NaN wins; over no elements the identity (-inf for max, +inf for min)."""
    (x,), (axes, keep) = args, _keep(op)
    is_max = isinstance(op, hl.MaxOp)
    identity = -np.inf if is_max else np.inf
    filled = np.where(np.isnan(x), 0.0, x)
    best = (np.max if is_max else np.min)(filled, axis=axes, keepdims=keep, initial=identity)
    nan = np.any(np.isnan(x), axis=axes, keepdims=keep)
    return np.where(nan, np.nan, best), np.zeros(np.shape(best))


def _mean(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
    n = _count(args[0], ints(op.axes))  # type: ignore[attr-defined]
    want, bound = _sum(op, args, lim)
    with np.errstate(all="ignore"):
        return want / n, bound / n + lim.eps * finite(want / n) + lim.tiny


def _statistics(x: np.ndarray, axes: tuple[int, ...], correction: int, lim: Limits
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """d = x - mean, var = sum(d^2) / (n - correction), their error bounds (keepdims)."""
    n = _count(x, axes)
    with np.errstate(all="ignore"):
        mean = np.sum(x, axis=axes, keepdims=True) / n
        d = x - mean
        d_mag = np.sum(d * d, axis=axes, keepdims=True)
        var = d_mag / max(n - correction, 0)
        mean_err = lim.accumulated(np.sum(finite(x), axis=axes, keepdims=True), n) / max(n, 1)
        d_err = lim.eps * finite(d) + mean_err
        spread = np.sum(finite(d), axis=axes, keepdims=True)
        var_err = (lim.accumulated(d_mag, n + 2) + 2 * mean_err * spread) / max(n - correction, 1)
        overflow = np.max(finite(x), axis=axes, keepdims=True, initial=0.0) ** 2 * n >= lim.max
    return d, var, d_err, np.where(overflow, np.inf, var_err + lim.eps * finite(var) + lim.tiny)


def _var(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
    (x,), (axes, keep) = args, _keep(op)
    _, var, _, err = _statistics(x, axes, op.correction.value.data, lim)  # type: ignore[attr-defined]
    if not keep:
        var, err = np.squeeze(var, axis=axes), np.squeeze(err, axis=axes)
    return var, err


def _normalized(x: np.ndarray, axes: tuple[int, ...], eps: float, lim: Limits,
                dtype: np.dtype) -> Result:
    """(x - mean) / sqrt(biased var + eps), eps in the element type as the op adds it."""
    d, var, d_err, var_err = _statistics(x, axes, 0, lim)
    with np.errstate(all="ignore"):
        root = np.sqrt(var + float(dtype.type(eps)))
        want = d / root
        bound = d_err / root + finite(want) * (0.5 * var_err / root**2 + 4 * lim.eps)
    return want, np.where(np.isnan(bound), np.inf, bound) + lim.tiny


def _norm(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
    x, eps = args[0], op.eps.value.data  # type: ignore[attr-defined]
    dtype = dtypes.to_numpy(element_of(op.results[0]))
    if isinstance(op, hl.LayerNormOp):
        return _normalized(x, ints(op.axes), eps, lim, dtype)
    if isinstance(op, hl.BatchNormOp):
        return _normalized(x, tuple(a for a in range(x.ndim) if a != 1), eps, lim, dtype)
    groups = op.groups.value.data  # type: ignore[attr-defined]
    rows = x.reshape(x.shape[0], groups, -1) if x.size else x.reshape(x.shape[0], groups, 0)
    want, bound = _normalized(rows, (2,), eps, lim, dtype)
    return want.reshape(x.shape), bound.reshape(x.shape)


def _softmax(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
    x, axis = args[0], op.axis.value.data  # type: ignore[attr-defined]
    n = x.shape[axis]
    with np.errstate(all="ignore"):
        shifted = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
        total = np.sum(np.exp(shifted), axis=axis, keepdims=True)
        spread = np.max(finite(shifted), axis=axis, keepdims=True, initial=0.0)
        if isinstance(op, hl.SoftmaxOp):
            want = np.exp(shifted) / total
            return want, lim.eps * finite(want) * (2 * spread + n + 6) + lim.tiny
        want = shifted - np.log(total)
        return want, lim.eps * (2 * finite(shifted) + n + 4 + finite(np.log(total))
                                + finite(want))


# --------------------------------------------------------------------------- linear algebra, nn


def _contract(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy.matmul as products summed in float64 (no BLAS: a zero times inf is NaN)."""
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    out = np.sum(a2[..., :, :, None] * b2[..., None, :, :], axis=-2)
    if a.ndim == 1:
        out = out[..., 0, :]
    return out[..., 0] if b.ndim == 1 else out


def _matmul(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
    a, b = args
    with np.errstate(all="ignore"):
        return _contract(a, b), lim.accumulated(_contract(finite(a), finite(b)), a.shape[-1])


def _patches(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
             dilations: Sequence[int], out_hw: Sequence[int]) -> np.ndarray:
    """(..., OH, OW, KH, KW): the input element each kernel tap meets at each output."""
    rows = np.arange(out_hw[0])[:, None] * strides[0] + np.arange(kernel[0])[None] * dilations[0]
    cols = np.arange(out_hw[1])[:, None] * strides[1] + np.arange(kernel[1])[None] * dilations[1]
    return x[..., rows[:, None, :, None], cols[None, :, None, :]]


def _padded(x: np.ndarray, padding: Sequence[int], value: float) -> np.ndarray:
    top, left, bottom, right = padding
    widths = [(0, 0)] * (x.ndim - 2) + [(top, bottom), (left, right)]
    return np.pad(x, widths, constant_values=value)


def _conv2d(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
    x, w = args
    n, o, oh, ow = shape_of(op.results[0])
    groups = op.groups.value.data  # type: ignore[attr-defined]
    _, cg, kh, kw = w.shape
    where = (ints(op.strides), ints(op.dilations), (oh, ow))  # type: ignore[attr-defined]

    def conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        p = _patches(_padded(x, ints(op.padding), 0.0), (kh, kw), where[0], where[1], where[2])
        p = p.reshape(n, groups, 1, cg, oh, ow, kh, kw)
        wg = w.reshape(1, groups, o // groups, cg, 1, 1, kh, kw)
        return np.sum(p * wg, axis=(3, 6, 7)).reshape(n, o, oh, ow)

    with np.errstate(all="ignore"):
        return conv(x, w), lim.accumulated(conv(finite(x), finite(w)), cg * kh * kw)


def _pool(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
    """max: padding is -inf and NaN wins; avg: padding counts as zeros."""
    x, kernel = args[0], ints(op.kernel)  # type: ignore[attr-defined]
    out_hw = shape_of(op.results[0])[-2:]
    is_max = isinstance(op, hl.MaxPool2dOp)
    xp = _padded(x, ints(op.padding), -np.inf if is_max else 0.0)  # type: ignore[attr-defined]
    p = _patches(xp, kernel, ints(op.strides), (1, 1), out_hw)  # type: ignore[attr-defined]
    if is_max:
        nan = np.any(np.isnan(p), axis=(-2, -1))
        best = np.max(np.where(np.isnan(p), -np.inf, p), axis=(-2, -1), initial=-np.inf)
        return np.where(nan, np.nan, best), np.zeros(nan.shape)
    k = math.prod(kernel)
    with np.errstate(all="ignore"):
        want = np.sum(p, axis=(-2, -1)) / k
        bound = lim.accumulated(np.sum(finite(p), axis=(-2, -1)), k) / k
        return want, bound + lim.eps * finite(want) + lim.tiny


# --------------------------------------------------------------------------- movement


def _exact(fn: Callable[[Operation, list[np.ndarray]], np.ndarray]) -> Reference:
    def reference(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
        want = np.asarray(fn(op, args), F64)
        return want, np.zeros(want.shape)

    return reference


def _slice(op: Operation, args: list[np.ndarray]) -> np.ndarray:
    bounds = zip(ints(op.starts), ints(op.limits), ints(op.steps), strict=True)  # type: ignore[attr-defined]
    return args[0][tuple(slice(s, e, k) for s, e, k in bounds)]


def _pad(op: Operation, args: list[np.ndarray]) -> np.ndarray:
    if args[0].ndim == 0:
        return args[0]
    widths = list(zip(ints(op.low), ints(op.high), strict=True))  # type: ignore[attr-defined]
    return np.pad(args[0], widths, constant_values=op.pad_value)  # type: ignore[attr-defined]


MOVEMENT: dict[type[Operation], Callable[[Operation, list[np.ndarray]], np.ndarray]] = {
    hl.ReshapeOp: lambda op, a: a[0].reshape(shape_of(op.results[0])),
    hl.PermuteOp: lambda op, a: np.transpose(a[0], ints(op.perm)),  # type: ignore[attr-defined]
    hl.BroadcastToOp: lambda op, a: np.broadcast_to(a[0], shape_of(op.results[0])),
    hl.PadOp: _pad,
    hl.SliceOp: _slice,
    hl.FlipOp: lambda op, a: np.flip(a[0], ints(op.axes)),  # type: ignore[attr-defined]
    hl.ConcatOp: lambda op, a: np.concatenate(a, axis=op.axis.value.data),  # type: ignore[attr-defined]
    hl.WhereOp: lambda op, a: np.where(a[0] != 0, a[1], a[2]),
}


def _elementwise(fn: Callable[..., np.ndarray], roundings: float) -> Reference:
    def reference(op: Operation, args: list[np.ndarray], lim: Limits) -> Result:
        return _rounded(fn(*args), roundings, lim)

    return reference


def _table() -> dict[type[Operation], Reference]:
    table = {kind: _elementwise(fn, r) for kind, (fn, r) in {**UNARY, **BINARY}.items()}
    table.update({kind: _exact(fn) for kind, fn in MOVEMENT.items()})
    table.update({
        hl.CastOp: _cast, hl.SumOp: _sum, hl.MaxOp: _extreme, hl.MinOp: _extreme,
        hl.MeanOp: _mean, hl.VarOp: _var, hl.LayerNormOp: _norm, hl.BatchNormOp: _norm,
        hl.GroupNormOp: _norm, hl.SoftmaxOp: _softmax, hl.LogSoftmaxOp: _softmax,
        hl.MatmulOp: _matmul, hl.Conv2dOp: _conv2d, hl.MaxPool2dOp: _pool,
        hl.AvgPool2dOp: _pool,
    })
    return table


REFERENCES = _table()


# --------------------------------------------------------------------------- the check


def returning_everything(module: ModuleOp) -> tuple[ModuleOp, list[SSAValue]]:
    """A copy of `module` whose @main returns every value its ops compute, and those values."""
    copy = module.clone()
    main = next(op for op in copy.ops if isinstance(op, func.FuncOp))
    block = main.body.block
    assert isinstance(block.last_op, func.ReturnOp)
    block.erase_op(block.last_op)
    values = [r for op in block.ops for r in op.results]
    block.add_op(func.ReturnOp(*values))
    main.body.detach_block(block)
    types = ([a.type for a in block.args], [v.type for v in values])
    return ModuleOp([func.FuncOp("main", types, Region(block))]), values


def applies(op: Operation) -> bool:
    """Whether float64 numpy says anything about `op`: a float among its values."""
    values = [*op.operands, *op.results]
    return type(op) in REFERENCES and any(dtypes.is_float(element_of(v)) for v in values)


Run = Callable[[ModuleOp, list[np.ndarray]], list[np.ndarray]]


@dataclass
class Check:
    """What the check found: `problem` (None: every op agrees) and whether some op's
    magnitudes reach the largest value of its type (`overflow`): then which of inf or NaN
    the op gives depends on the order it adds in."""

    problem: str | None
    overflow: bool


def check_interpreter(module: ModuleOp, inputs: Sequence[np.ndarray], run: Run = interp.run
                      ) -> Check:
    """Every float op of @main against float64 numpy. `run` runs the interpreter (a test
    swaps in a broken one)."""
    traced, values = returning_everything(module)
    env: dict[SSAValue, np.ndarray] = dict(zip(traced.body.block.first_op.body.block.args,  # type: ignore[union-attr]
                                               inputs, strict=True))
    env.update(zip(values, run(traced, list(inputs)), strict=True))
    overflow = False
    for value in values:
        op = value.owner
        if not isinstance(op, Operation) or isinstance(op, ll.ConstOp) or not applies(op):
            continue
        args = [np.asarray(env[v], F64) for v in op.operands]
        float_dtype = next((dtypes.to_numpy(element_of(v)) for v in (value, *op.operands)
                            if dtypes.is_float(element_of(v))), F64)
        with np.errstate(all="ignore"):
            want, bound = REFERENCES[type(op)](op, args, Limits(float_dtype))
        overflow = overflow or bool(np.isinf(bound).any())
        problem = differs(env[value], want, bound, Limits(float_dtype))
        if problem is not None:
            types = ", ".join(str(v.type) for v in op.operands)
            return Check(f"{op.name} on {types}: {problem}", overflow)
    return Check(None, overflow)


def differs(got: np.ndarray, want: np.ndarray, bound: np.ndarray, lim: Limits) -> str | None:
    """Where `got` (any dtype) is outside `want` +- `bound`, as a message; else None."""
    g = np.asarray(got).astype(F64)
    want, bound = np.broadcast_to(want, g.shape), np.broadcast_to(bound, g.shape)
    with np.errstate(all="ignore"):
        nan_differs = np.isnan(g) != np.isnan(want)
        both_inf = np.isinf(g) & (g == want)
        overflow = (np.isinf(g) & ~np.isnan(want)
                    & (finite(want) + bound >= lim.max * (1 - lim.eps)))
        far = np.abs(g - want) > bound
    bad = (nan_differs | (far & ~np.isnan(want))) & ~(np.isinf(bound) | both_inf | overflow)
    if not bad.any():
        return None
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"{int(bad.sum())} of {bad.size} elements differ; at {list(index)}: "
            f"{g[index]:.9g}, float64 gives {want[index]:.9g} (bound {bound[index]:.3g})")


__all__ = ["REFERENCES", "Check", "applies", "check_interpreter", "returning_everything"]
