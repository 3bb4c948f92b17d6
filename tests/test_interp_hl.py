"""The reference interpreter on every `hl` op, against numpy written out in the tests.

Each test runs a one-op function through `irtensor.interp.run` and compares the
values, shape and dtype with an independent computation: floats in float64 then
rounded to the element type, conv2d and the pools as naive loops.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import (
    BF16,
    F16,
    F32,
    F64,
    FLOATS,
    I1,
    I32,
    I64,
    INF,
    INTS,
    NAN,
    RTOL,
    check,
    data,
    expect,
    ident,
    lit,
    run_op,
    ttype,
)
from irtensor.dialects._base import format_scalar
from irtensor.interp import run
from irtensor.ir import IRError, parse

pytestmark = pytest.mark.filterwarnings("error")  # NaN and inf must come out silently


# --------------------------------------------------------------------------- unary

UNARY_FLOAT: list[tuple[str, Callable[[np.ndarray], Any], bool]] = [
    # name, float64 reference, positive inputs only
    ("neg", lambda x: -x, False),
    ("abs", lambda x: np.where(x < 0, -x, x), False),
    ("relu", lambda x: np.where(x > 0, x, 0.0), False),
    ("exp", lambda x: math.e**x, False),
    ("exp2", lambda x: 2.0**x, False),
    ("log", np.log, True),
    ("log2", lambda x: np.log(x) / math.log(2), True),
    ("sqrt", lambda x: x**0.5, True),
    ("rsqrt", lambda x: x**-0.5, True),
    ("reciprocal", lambda x: 1.0 / x, False),
    ("sin", np.sin, False),
    ("cos", np.cos, False),
    ("sigmoid", lambda x: 1.0 / (1.0 + math.e ** (-x)), False),
    ("tanh", lambda x: (math.e ** (2 * x) - 1) / (math.e ** (2 * x) + 1), False),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize(("name", "ref", "positive"), UNARY_FLOAT, ids=ident)
def test_unary_float(name: str, ref: Callable[[np.ndarray], Any], positive: bool, dtype):
    x = data((2, 3), dtype, low=0.1 if positive else -3)
    x[x == 0] = 1  # keep reciprocal finite
    want = np.asarray(ref(x.astype(F64))).astype(dtype)
    expect(f"hl.{name} %a0 : {{0}}", [x], want)


@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize(
    ("name", "want"),
    [("neg", [5, 0, -3, 2**31]), ("abs", [5, 0, 3, 2**31]), ("relu", [0, 0, 3, 0])],
)
def test_unary_int(name: str, want: list[int], dtype):
    x = lit([-5, 0, 3, -(2**31)], dtype)
    expect(f"hl.{name} %a0 : {{0}}", [x], np.array(want).astype(dtype))  # i32 wraps


SPECIAL = [NAN, INF, -INF, 0.0, -0.0, -1.0]
UNARY_SPECIAL = [
    ("relu", [NAN, INF, 0, 0, 0, 0]),
    ("exp", [NAN, INF, 0, 1, 1, math.exp(-1)]),
    ("log", [NAN, INF, NAN, -INF, -INF, NAN]),
    ("sqrt", [NAN, INF, NAN, 0, 0, NAN]),
    ("rsqrt", [NAN, 0, NAN, INF, -INF, NAN]),
    ("reciprocal", [NAN, 0, 0, INF, -INF, -1]),
    ("sigmoid", [NAN, 1, 0, 0.5, 0.5, 1 / (1 + math.e)]),
    ("tanh", [NAN, 1, -1, 0, 0, math.tanh(-1)]),
    ("abs", [NAN, INF, INF, 0, 0, 1]),
]


@pytest.mark.parametrize("dtype", [F32, BF16], ids=str)
@pytest.mark.parametrize(("name", "want"), UNARY_SPECIAL, ids=ident)
def test_unary_nan_inf(name: str, want: list[float], dtype):
    expect(f"hl.{name} %a0 : {{0}}", [lit(SPECIAL, dtype)], lit(want, dtype))


def test_sigmoid_saturates_without_warnings():
    x = lit([-1000.0, 1000.0, -100.0], F32)
    expect("hl.sigmoid %a0 : {0}", [x], lit([0.0, 1.0, 0.0], F32))
    expect("hl.sigmoid %a0 : {0}", [x.astype(F16)], lit([0.0, 1.0, 0.0], F16))


def test_not():
    x = lit([[True, False], [False, False]], I1)
    expect("hl.not %a0 : {0}", [x], lit([[False, True], [True, True]], I1))


CASTS = [
    (lit([-1.7, -0.5, 0.0, 2.9, 100.25], F32), I32, [-1, 0, 0, 2, 100]),
    (lit([-3, 0, 7, 2**24 + 1], I32), F32, [-3.0, 0.0, 7.0, 2.0**24]),
    (lit([-2.0, 0.0, 0.5, NAN], F32), I1, [True, False, True, True]),
    (lit([True, False], I1), F32, [1.0, 0.0]),
    (lit([True, False], I1), I64, [1, 0]),
    (lit([1.0 + 2**-10, 3.0, -INF], F32), BF16, [1.0, 3.0, -INF]),
    (lit([1e5, 0.1, NAN], F64), F16, [INF, 0.1, NAN]),
    (lit([2**33 + 5, -1], I64), I32, [5, -1]),
    (lit([0.5, -2.25], F16), F64, [0.5, -2.25]),
]


@pytest.mark.parametrize(("x", "to", "want"), CASTS, ids=ident)
def test_cast(x: np.ndarray, to: np.dtype, want: list[Any]):
    expect("hl.cast %a0 : {0} -> {r}", [x], lit(want, to), scale=10)


# --------------------------------------------------------------------------- binary

PY_FLOORDIV = np.frompyfunc(operator.floordiv, 2, 1)  # Python ints: floor division
PY_MOD = np.frompyfunc(operator.mod, 2, 1)  # Python ints: sign of the divisor

# name, dtypes, float64/int64/bool reference
BINARY: list[tuple[str, list[np.dtype], Callable[[Any, Any], Any]]] = [
    ("add", [*FLOATS, *INTS], lambda a, b: a + b),
    ("sub", [*FLOATS, *INTS], lambda a, b: a - b),
    ("mul", [*FLOATS, *INTS], lambda a, b: a * b),
    ("div", FLOATS, lambda a, b: a / b),
    ("pow", FLOATS, lambda a, b: np.abs(a) ** b),
    ("maximum", [*FLOATS, *INTS, I1], lambda a, b: np.where(a > b, a, b)),
    ("minimum", [*FLOATS, *INTS, I1], lambda a, b: np.where(a < b, a, b)),
    ("idiv", INTS, lambda a, b: PY_FLOORDIV(a.astype(object), b.astype(object))),
    ("mod", INTS, lambda a, b: PY_MOD(a.astype(object), b.astype(object))),
    ("and", [I1], lambda a, b: a & b),
    ("or", [I1], lambda a, b: a | b),
    ("xor", [I1], lambda a, b: a != b),
]
COMPARE = [
    ("lt", lambda a, b: a < b),
    ("le", lambda a, b: a <= b),
    ("gt", lambda a, b: a > b),
    ("ge", lambda a, b: a >= b),
    ("eq", lambda a, b: a == b),
    ("ne", lambda a, b: a != b),
]
BROADCASTS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((4, 1, 2), (3, 1))]


def _operands(name: str, lhs: Sequence[int], rhs: Sequence[int], dtype: np.dtype):
    a, b = data(lhs, dtype, seed=1, low=-4, high=4), data(rhs, dtype, seed=2, low=-4, high=4)
    if name == "pow":
        a = np.abs(a) + dtype.type(0.5)
    if name in ("div", "idiv", "mod"):
        b[b == 0] = 3
    return a, b


@pytest.mark.parametrize(("lhs", "rhs"), BROADCASTS, ids=str)
@pytest.mark.parametrize(
    ("name", "dtype", "ref"), [(n, d, r) for n, ds, r in BINARY for d in ds], ids=ident
)
def test_binary(name: str, dtype, ref, lhs, rhs):
    a, b = _operands(name, lhs, rhs, dtype)
    wide = F64 if dtype in RTOL else (I64 if dtype in INTS else I1)
    want = np.asarray(ref(a.astype(wide), b.astype(wide))).astype(dtype)
    expect(f"hl.{name} %a0, %a1 : {{0}}, {{1}} -> {{r}}", [a, b], want, scale=4)


@pytest.mark.parametrize(("lhs", "rhs"), BROADCASTS[1:3], ids=str)
@pytest.mark.parametrize("dtype", [F32, BF16, I32, I1], ids=str)
@pytest.mark.parametrize(("name", "ref"), COMPARE, ids=ident)
def test_compare(name: str, ref, dtype, lhs, rhs):
    a, b = data(lhs, dtype, seed=3, low=-2, high=2), data(rhs, dtype, seed=4, low=-2, high=2)
    b.flat[0] = a.flat[0]  # at least one tie
    want = ref(a.astype(F64), b.astype(F64))
    got = run_op(f"hl.{name} %a0, %a1 : {{0}}, {{1}} -> {{r}}", [a, b], ttype(want.shape, I1))
    check(got, want.astype(I1))


def test_compare_nan():
    a, b = lit([NAN, 1.0, NAN, -INF], F32), lit([1.0, NAN, NAN, -INF], F32)
    for name, want in [("lt", [0, 0, 0, 0]), ("eq", [0, 0, 0, 1]), ("ne", [1, 1, 1, 0])]:
        got = run_op(f"hl.{name} %a0, %a1 : {{0}}, {{1}} -> {{r}}", [a, b], "tensor<4xi1>")
        check(got, lit(want, I1))


@pytest.mark.parametrize("dtype", [F32, F16, BF16, F64], ids=str)
def test_maximum_minimum_nan_wins(dtype):
    a, b = lit([NAN, 1.0, -INF, 2.0, -0.5], dtype), lit([0.0, NAN, INF, NAN, -1.0], dtype)
    expect("hl.maximum %a0, %a1 : {0}, {1} -> {r}", [a, b], lit([NAN, NAN, INF, NAN, -0.5], dtype))
    expect("hl.minimum %a0, %a1 : {0}, {1} -> {r}", [a, b], lit([NAN, NAN, -INF, NAN, -1], dtype))


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_idiv_mod_floor_and_zero(dtype):
    a = lit([7, -7, 7, -7, 5, 0, -3, 6], dtype)
    b = lit([2, 2, -2, -2, 0, 0, 0, -3], dtype)
    expect("hl.idiv %a0, %a1 : {0}, {1} -> {r}", [a, b], lit([3, -4, -4, 3, 0, 0, 0, -2], dtype))
    expect("hl.mod %a0, %a1 : {0}, {1} -> {r}", [a, b], lit([1, 1, -1, -1, 0, 0, 0, 0], dtype))


def test_integer_overflow_wraps():
    big = lit([2**31 - 1, -(2**31)], I32)
    wrapped = lit([-(2**31), -(2**31) + 1], I32)
    expect("hl.add %a0, %a1 : {0}, {1} -> {r}", [big, lit(1, I32)], wrapped)
    expect("hl.mul %a0, %a1 : {0}, {1} -> {r}", [big, lit(2, I32)], lit([-2, 0], I32))


@pytest.mark.parametrize("dtype", [F32, I32, I1, BF16], ids=str)
def test_where_broadcasts(dtype):
    c = lit([[True], [False]], I1)
    a, b = data((3,), dtype, seed=5), data((), dtype, seed=6)
    want = np.array([[a[0], a[1], a[2]], [b, b, b]], dtype=dtype)
    expect("hl.where %a0, %a1, %a2 : {0}, {1}, {2} -> {r}", [c, a, b], want)


@settings(max_examples=40, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3),
    seed=st.integers(0, 2**16),
)
def test_add_broadcasts_like_numpy(shapes, seed: int):
    a, b = data(shapes.input_shapes[0], F32, seed), data(shapes.input_shapes[1], F32, seed + 1)
    want = (a.astype(F64) + b.astype(F64)).astype(F32)  # exact: f64 has room for an f32 sum
    got = run_op("hl.add %a0, %a1 : {0}, {1} -> {r}", [a, b], ttype(shapes.result_shape, F32))
    assert got.shape == shapes.result_shape
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------- reductions


def reduce_ref(
    x: np.ndarray, axes: Sequence[int], keepdim: bool, row: Callable[[list[Any]], Any], dtype
) -> np.ndarray:
    """Apply `row` (plain Python) to the list of elements each output position combines."""
    rest = [a for a in range(x.ndim) if a not in axes]
    kept = tuple(x.shape[a] for a in rest)
    moved = np.transpose(x, [*rest, *axes])
    rows = moved.reshape(math.prod(kept), math.prod(x.shape[a] for a in axes))
    shape = tuple(1 if a in axes else d for a, d in enumerate(x.shape)) if keepdim else kept
    wide = F64 if dtype in RTOL else I64
    return np.array([row(r.tolist()) for r in rows], dtype=wide).reshape(shape).astype(dtype)


def _max_row(r: list[Any], empty: Any) -> Any:
    return NAN if any(v != v for v in r) else max(r, default=empty)


def _min_row(r: list[Any], empty: Any) -> Any:
    return NAN if any(v != v for v in r) else min(r, default=empty)


def _mean_row(r: list[float]) -> float:
    return math.fsum(r) / len(r) if r else NAN


def _identity(dtype: np.dtype, top: bool) -> Any:
    if dtype == I1:
        return top
    if dtype in INTS:
        info = np.iinfo(dtype)
        return int(info.max if top else info.min)
    return INF if top else -INF


REDUCE_SHAPES = [
    ((2, 3, 4), (1,), False),
    ((2, 3, 4), (0, 2), True),
    ((2, 3, 4), (), False),
    ((2, 3, 4), (), True),
    ((2, 3, 4), (0, 1, 2), False),
    ((2, 3, 4), (2, 0), False),
    ((), (), False),
    ((0, 3), (0,), False),
    ((3, 0), (1,), True),
    ((3, 0), (0,), False),
]
REDUCTIONS = [
    ("sum", [F32, F16, BF16, F64, I32, I64]),
    ("max", [F32, BF16, I32, I64, I1]),
    ("min", [F32, F16, I32, I1]),
    ("mean", [F32, F16, BF16, F64]),
]


def _row_fn(name: str, dtype: np.dtype) -> Callable[[list[Any]], Any]:
    if name == "sum":
        return math.fsum if dtype in RTOL else sum
    if name == "max":
        return lambda r: _max_row(r, _identity(dtype, top=False))
    if name == "min":
        return lambda r: _min_row(r, _identity(dtype, top=True))
    return _mean_row


def _reduce_op(name: str, axes: Sequence[int], keepdim: bool, extra: str = "") -> str:
    keep = " keepdim" if keepdim else ""
    return f"hl.{name} %a0 axes {list(axes)}{keep}{extra} : {{0}} -> {{r}}"


@pytest.mark.parametrize(("shape", "axes", "keepdim"), REDUCE_SHAPES, ids=str)
@pytest.mark.parametrize(("name", "dtype"), [(n, d) for n, ds in REDUCTIONS for d in ds], ids=str)
def test_reduction(name: str, dtype, shape, axes, keepdim):
    x = data(shape, dtype, seed=7)
    want = reduce_ref(x, axes, keepdim, _row_fn(name, dtype), dtype)
    expect(_reduce_op(name, axes, keepdim), [x], want, scale=4)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_nan_wins(name: str):
    x = lit([[1.0, NAN, 3.0], [-INF, -INF, 2.0], [INF, 0.0, NAN]], F32)
    want = {"max": [NAN, 2.0, NAN], "min": [NAN, -INF, NAN]}[name]
    expect(_reduce_op(name, [1], False), [x], lit(want, F32))
    expect(_reduce_op(name, [0, 1], False), [x], lit(NAN, F32))


@pytest.mark.parametrize(
    ("dtype", "want_max", "want_min"),
    [(F32, -INF, INF), (I32, -(2**31), 2**31 - 1), (I64, -(2**63), 2**63 - 1), (I1, False, True)],
    ids=str,
)
def test_max_min_over_nothing(dtype, want_max, want_min):
    x = np.zeros((0, 2), dtype)
    expect(_reduce_op("max", [0], True), [x], np.full((1, 2), want_max, dtype))
    expect(_reduce_op("min", [0], False), [x], np.full((2,), want_min, dtype))


def test_sum_and_mean_over_nothing():
    x = np.zeros((2, 0), F32)
    expect(_reduce_op("sum", [1], False), [x], lit([0.0, 0.0], F32))
    expect(_reduce_op("sum", [1], False), [x.astype(I32)], lit([0, 0], I32))
    expect(_reduce_op("mean", [1], True), [x], lit([[NAN], [NAN]], F32))


def _var_row(correction: int) -> Callable[[list[float]], float]:
    def row(r: list[float]) -> float:
        m = math.fsum(r) / len(r)
        return math.fsum((v - m) ** 2 for v in r) / (len(r) - correction)

    return row


@pytest.mark.parametrize("dtype", [F32, F64, F16], ids=str)
@pytest.mark.parametrize(
    ("shape", "axes", "keepdim"),
    [((3, 4), (1,), False), ((3, 4), (0,), True), ((2, 3, 4), (0, 2), False), ((5,), (0,), False)],
    ids=str,
)
@pytest.mark.parametrize("correction", [0, 1])
def test_var(correction: int, shape, axes, keepdim, dtype):
    x = data(shape, dtype, seed=8)
    want = reduce_ref(x, axes, keepdim, _var_row(correction), dtype)
    expect(_reduce_op("var", axes, keepdim, f" correction {correction}"), [x], want, scale=8)


def test_var_default_correction_is_one():
    x = lit([1.0, 2.0, 3.0, 6.0], F32)
    expect(_reduce_op("var", [0], False), [x], lit(14.0 / 3.0, F32))


@pytest.mark.parametrize(
    ("values", "correction", "want"),
    [([1.0, 2.0], 2, INF), ([3.0], 1, NAN), ([5.0, 5.0], 2, NAN), ([1.0, 3.0], 3, INF),
     ([], 0, NAN), ([1.0, 3.0], -1, 2.0 / 3.0)],
    ids=str,
)
def test_var_without_degrees_of_freedom(values: list[float], correction: int, want: float):
    x = lit(values, F32)
    expect(_reduce_op("var", [0], False, f" correction {correction}"), [x], lit(want, F32))


# --------------------------------------------------------------------------- movement


def _dtype_cases() -> list[np.dtype]:
    return [F32, BF16, I32, I1]


@pytest.mark.parametrize("dtype", _dtype_cases(), ids=str)
@pytest.mark.parametrize(
    ("shape", "new"),
    [((2, 6), (3, 4)), ((2, 3, 4), (24,)), ((1, 1), ()), ((), (1, 1, 1)), ((0, 3), (3, 0, 2))],
    ids=str,
)
def test_reshape(shape, new, dtype):
    x = data(shape, dtype, seed=9)
    want = np.array(x.astype(F64).flatten().tolist(), F64).astype(dtype).reshape(new)
    expect("hl.reshape %a0 : {0} -> {r}", [x], want)


def permute_ref(x: np.ndarray, perm: Sequence[int]) -> np.ndarray:
    out = np.empty(tuple(x.shape[p] for p in perm), x.dtype)
    for idx in np.ndindex(*out.shape):
        src = [0] * x.ndim
        for d, p in enumerate(perm):
            src[p] = idx[d]
        out[idx] = x[tuple(src)]
    return out


@pytest.mark.parametrize("dtype", _dtype_cases(), ids=str)
@pytest.mark.parametrize(
    ("shape", "perm"), [((2, 3, 4), (2, 0, 1)), ((2, 3), (1, 0)), ((3,), (0,)), ((), ())], ids=str
)
def test_permute(shape, perm, dtype):
    x = data(shape, dtype, seed=10)
    expect(f"hl.permute %a0 {list(perm)} : {{0}} -> {{r}}", [x], permute_ref(x, perm))


def broadcast_ref(x: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    out = np.empty(tuple(shape), x.dtype)
    for idx in np.ndindex(*out.shape):
        tail = idx[len(shape) - x.ndim :]
        out[idx] = x[tuple(0 if n == 1 else i for i, n in zip(tail, x.shape, strict=True))]
    return out


@pytest.mark.parametrize("dtype", _dtype_cases(), ids=str)
@pytest.mark.parametrize(
    ("shape", "new"), [((3, 1), (2, 3, 4)), ((), (2, 2)), ((4,), (3, 4)), ((2, 1), (2, 0))],
    ids=str,
)
def test_broadcast_to(shape, new, dtype):
    x = data(shape, dtype, seed=11)
    out = run_op("hl.broadcast_to %a0 : {0} -> {r}", [x], ttype(new, dtype))
    check(out, broadcast_ref(x, new))
    out.flat[:1] = x.flat[:1]  # run returns writeable arrays, never read-only broadcast views


def pad_ref(x: np.ndarray, low: Sequence[int], high: Sequence[int], fill: Any) -> np.ndarray:
    shape = tuple(d + lo + hi for d, lo, hi in zip(x.shape, low, high, strict=True))
    out = np.full(shape, fill, x.dtype)
    out[tuple(slice(lo, lo + d) for lo, d in zip(low, x.shape, strict=True))] = x
    return out


PADS = [
    (F32, (2, 2), (1, 0), (0, 2), 1.5, 1.5),
    (F32, (2, 2), (1, 1), (1, 1), -INF, -INF),
    (F16, (3,), (0,), (2,), NAN, NAN),
    (BF16, (2, 1), (0, 1), (1, 0), 0.0, 0.0),
    (I32, (2, 2), (1, 0), (1, 1), -INF, -(2**31)),
    (I64, (2,), (1,), (1,), INF, 2**63 - 1),
    (I32, (2,), (1,), (0,), 2.0, 2),
    (I1, (2,), (1,), (1,), -INF, False),
    (I1, (2,), (1,), (1,), 1.0, True),
    (F32, (0, 2), (1, 0), (1, 1), 3.0, 3.0),
    (F32, (), (), (), 3.0, 3.0),
]


@pytest.mark.parametrize(("dtype", "shape", "low", "high", "value", "fill"), PADS, ids=str)
def test_pad(dtype, shape, low, high, value: float, fill: Any):
    x = data(shape, dtype, seed=12)
    text = format_scalar(value)
    op = f"hl.pad %a0 low {list(low)} high {list(high)} value {text} : {{0}} -> {{r}}"
    expect(op, [x], pad_ref(x, low, high, fill))


@pytest.mark.parametrize("dtype", [F32, I64], ids=str)
@pytest.mark.parametrize(
    ("shape", "starts", "limits", "steps"),
    [((8,), (1,), (7,), (2,)), ((5, 6), (0, 1), (5, 6), (3, 2)), ((4,), (2,), (2,), (1,)),
     ((3, 4), (1, 0), (3, 4), (1, 5))],
    ids=str,
)
def test_slice(shape, starts, limits, steps, dtype):
    x = data(shape, dtype, seed=13)
    picks = [list(range(s, e, k)) for s, e, k in zip(starts, limits, steps, strict=True)]
    want = x[np.ix_(*picks)] if all(picks) else np.zeros([len(p) for p in picks], dtype)
    op = f"hl.slice %a0 starts {list(starts)} limits {list(limits)} steps {list(steps)}"
    expect(op + " : {0} -> {r}", [x], want)


@pytest.mark.parametrize("dtype", _dtype_cases(), ids=str)
def test_flip(dtype):
    x = data((2, 3, 4), dtype, seed=14)
    want = np.array([[[x[1 - i, j, 3 - k] for k in range(4)] for j in range(3)] for i in range(2)])
    expect("hl.flip %a0 axes [0, 2] : {0}", [x], want.astype(dtype))
    expect("hl.flip %a0 axes [] : {0}", [x], x.copy())
    expect("hl.flip %a0 axes [] : {0}", [x[0, 0, 0].reshape(())], x[0, 0, 0].reshape(()))


@pytest.mark.parametrize("dtype", _dtype_cases(), ids=str)
def test_concat(dtype):
    a, b, c = data((2, 1), dtype, 15), data((2, 3), dtype, 16), data((2, 0), dtype, 17)
    want = np.array([[a[i, 0], *b[i].tolist()] for i in range(2)], dtype=a.dtype)
    expect("hl.concat %a0, %a1, %a2 axis 1 : {0}, {1}, {2} -> {r}", [a, b, c], want)
    want0 = np.array([*b.tolist(), *b.tolist()], dtype=dtype)
    expect("hl.concat %a0, %a1 axis 0 : {0}, {1} -> {r}", [b, b], want0)


@settings(max_examples=30, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=4, max_side=3),
    order=st.randoms(use_true_random=False),
)
def test_permute_and_reshape_round_trip(shape: tuple[int, ...], order: Any):
    perm = list(range(len(shape)))
    order.shuffle(perm)
    inverse = [perm.index(d) for d in range(len(shape))]
    x = data(shape, F32, seed=len(shape))
    t, p = ttype(shape, F32), ttype([shape[d] for d in perm], F32)
    flat = ttype([math.prod(shape)], F32)
    text = f"""func.func @main(%x: {t}) -> ({p}, {t}, {t}) {{
      %p = hl.permute %x {perm} : {t} -> {p}
      %back = hl.permute %p {inverse} : {p} -> {t}
      %f = hl.reshape %x : {t} -> {flat}
      %g = hl.reshape %f : {flat} -> {t}
      func.return %p, %back, %g : {p}, {t}, {t}
    }}"""
    permuted, back, again = run(parse(text), [x])
    check(permuted, permute_ref(x, perm))
    check(back, x)
    check(again, x)


# --------------------------------------------------------------------------- matmul, conv, pools


def matmul_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sum of products over the contracted axis, in float64, with numpy's 1-D and batch rules."""
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a3 = np.broadcast_to(a2, (*batch, *a2.shape[-2:])).astype(F64)
    b3 = np.broadcast_to(b2, (*batch, *b2.shape[-2:])).astype(F64)
    m, k, n = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    out = np.zeros((*batch, m, n))
    for idx in np.ndindex(*batch, m, n):
        *bi, i, j = idx
        out[idx] = math.fsum(a3[(*bi, i, t)] * b3[(*bi, t, j)] for t in range(k))
    if a.ndim == 1:
        out = out[..., 0, :]
    if b.ndim == 1:
        out = out[..., 0]
    return out


MATMULS = [((2, 3), (3, 4)), ((2, 1, 2, 3), (3, 3, 2)), ((3,), (3, 4)), ((2, 3), (3,)),
           ((3,), (3,)), ((2, 3, 4), (4,)), ((2, 0), (0, 3))]


@pytest.mark.parametrize("dtype", [F32, F16, BF16, F64, I32, I64], ids=str)
@pytest.mark.parametrize(("lhs", "rhs"), MATMULS, ids=str)
def test_matmul(lhs, rhs, dtype):
    a, b = data(lhs, dtype, seed=20), data(rhs, dtype, seed=21)
    want = matmul_ref(a, b)
    expect("hl.matmul %a0, %a1 : {0}, {1} -> {r}", [a, b], want.astype(dtype), scale=8)


def conv_ref(x, w, strides, padding, dilations, groups) -> np.ndarray:
    """torch.nn.functional.conv2d, one output element at a time, in float64."""
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (sh, sw), (dh, dw), (top, left, bottom, right) = strides, dilations, padding
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + left + right - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    for b, oc, i, j in np.ndindex(n, o, oh, ow):
        g = oc // (o // groups)
        total = 0.0
        for ci, p, q in np.ndindex(cg, kh, kw):
            y, z = i * sh - top + p * dh, j * sw - left + q * dw
            if 0 <= y < h and 0 <= z < wd:
                total += float(x[b, g * cg + ci, y, z]) * float(w[oc, ci, p, q])
        out[b, oc, i, j] = total
    return out


CONVS = [
    # x shape, w shape, strides, padding (t, l, b, r), dilations, groups
    ((1, 2, 5, 5), (3, 2, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 2, 6, 5), (3, 2, 3, 2), (2, 1), (0, 0, 0, 0), (1, 1), 1),
    ((1, 3, 4, 4), (2, 3, 3, 3), (1, 1), (1, 2, 0, 1), (1, 1), 1),
    ((1, 2, 7, 7), (2, 2, 3, 3), (1, 1), (0, 0, 0, 0), (2, 3), 1),
    ((2, 4, 6, 6), (6, 2, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),
    ((1, 4, 5, 5), (4, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 4),
    ((2, 6, 9, 8), (4, 3, 3, 2), (2, 3), (2, 1, 1, 0), (2, 1), 2),
    ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("dtype", [F32, F64, F16, BF16], ids=str)
@pytest.mark.parametrize(("xs", "ws", "strides", "padding", "dilations", "groups"), CONVS, ids=str)
def test_conv2d(xs, ws, strides, padding, dilations, groups, dtype):
    x, w = data(xs, dtype, seed=22, low=-1, high=1), data(ws, dtype, seed=23, low=-1, high=1)
    want = conv_ref(x, w, strides, padding, dilations, groups).astype(dtype)
    op = (f"hl.conv2d %a0, %a1 strides {list(strides)} padding {list(padding)} "
          f"dilations {list(dilations)} groups {groups} : {{0}}, {{1}} -> {{r}}")
    expect(op, [x, w], want, scale=8 if dtype in (F16, BF16) else 2)


def pool_ref(x: np.ndarray, kernel, strides, padding, kind: str) -> np.ndarray:
    """Pooling over the last two axes; out-of-range taps are skipped by max, zeros for avg."""
    (kh, kw), (sh, sw), (top, left, bottom, right) = kernel, strides, padding
    h, w = x.shape[-2:]
    oh, ow = (h + top + bottom - kh) // sh + 1, (w + left + right - kw) // sw + 1
    out = np.zeros((*x.shape[:-2], oh, ow))
    for *lead, i, j in np.ndindex(*x.shape[:-2], oh, ow):
        inside = [
            float(x[(*lead, i * sh - top + p, j * sw - left + q)])
            for p in range(kh)
            for q in range(kw)
            if 0 <= i * sh - top + p < h and 0 <= j * sw - left + q < w
        ]
        if kind == "max":
            out[(*lead, i, j)] = NAN if any(v != v for v in inside) else max(inside)
        else:
            out[(*lead, i, j)] = math.fsum(inside) / (kh * kw)
    return out


POOLS = [
    ((1, 2, 4, 4), (2, 2), (2, 2), (0, 0, 0, 0)),
    ((1, 1, 5, 5), (3, 3), (1, 1), (1, 1, 1, 1)),
    ((2, 1, 5, 6), (2, 3), (1, 2), (0, 1, 1, 0)),
    ((5, 5), (3, 3), (2, 2), (1, 1, 1, 1)),
    ((2, 4, 4), (2, 2), (1, 1), (1, 0, 0, 1)),
    ((1, 2, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0)),
]


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=str)
@pytest.mark.parametrize(("shape", "kernel", "strides", "padding"), POOLS, ids=str)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool2d(kind: str, shape, kernel, strides, padding, dtype):
    x = data(shape, dtype, seed=24, low=-4, high=-1)  # all negative: a zero pad would win a max
    want = pool_ref(x, kernel, strides, padding, kind).astype(dtype)
    op = (f"hl.{kind}_pool2d %a0 kernel {list(kernel)} strides {list(strides)} "
          f"padding {list(padding)} : {{0}} -> {{r}}")
    expect(op, [x], want, scale=2)


def test_max_pool_nan_propagates():
    x = lit([[[[1.0, NAN], [3.0, 4.0]]]], F32)
    expect("hl.max_pool2d %a0 kernel [1, 2] strides [1, 1] : {0} -> {r}", [x],
           lit([[[[NAN], [4.0]]]], F32))


# --------------------------------------------------------------------------- softmax, norms


def softmax_ref(x: np.ndarray, axis: int, log: bool) -> np.ndarray:
    x = x.astype(F64)
    m = np.max(x, axis=axis, keepdims=True)
    total = np.sum(np.exp(x - m), axis=axis, keepdims=True)
    return x - m - np.log(total) if log else np.exp(x - m) / total


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize(("shape", "axis"), [((2, 5), 1), ((2, 5), 0), ((2, 3, 4), 1), ((4,), 0)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(name: str, shape, axis: int, dtype):
    x = data(shape, dtype, seed=25, low=-5, high=5)
    want = softmax_ref(x, axis, log=name == "log_softmax").astype(dtype)
    expect(f"hl.{name} %a0 axis {axis} : {{0}}", [x], want, scale=4)


def test_softmax_is_stable_and_handles_inf():
    x = lit([[1000.0, 1000.0, -INF], [0.0, -INF, -INF]], F32)
    expect("hl.softmax %a0 axis 1 : {0}", [x], lit([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]], F32))
    want = lit([[-math.log(2), -math.log(2), -INF], [0.0, -INF, -INF]], F32)
    expect("hl.log_softmax %a0 axis 1 : {0}", [x], want)


def norm_ref(x: np.ndarray, groups_of: Callable[[tuple[int, ...]], Any], eps: float):
    """Normalise, in float64, each set of positions that `groups_of(index)` maps together."""
    x64 = x.astype(F64)
    members: dict[Any, list[tuple[int, ...]]] = {}
    for idx in np.ndindex(*x.shape):
        members.setdefault(groups_of(idx), []).append(idx)
    out = np.zeros(x.shape)
    for idxs in members.values():
        vals = [x64[i] for i in idxs]
        mean = math.fsum(vals) / len(vals)
        var = math.fsum((v - mean) ** 2 for v in vals) / len(vals)
        for i in idxs:
            out[i] = (x64[i] - mean) / math.sqrt(var + eps)
    return out.astype(x.dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize(
    ("axes", "eps"), [((2,), 1e-5), ((1, 2), 1e-5), ((0,), 0.5), ((), 1e-5)], ids=str
)
def test_layer_norm(axes, eps: float, dtype):
    x = data((2, 3, 4), dtype, seed=26)
    want = norm_ref(x, lambda i: tuple(v for d, v in enumerate(i) if d not in axes), eps)
    expect(f"hl.layer_norm %a0 axes {list(axes)} eps {eps:e} : {{0}}", [x], want, scale=8)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(4, 3, 2, 2), (5, 2), (2, 3, 4)], ids=str)
def test_batch_norm(shape, dtype):
    x = data(shape, dtype, seed=27)
    expect("hl.batch_norm %a0 : {0}", [x], norm_ref(x, lambda i: i[1], 1e-5), scale=8)
    expect("hl.batch_norm %a0 eps 0.25 : {0}", [x], norm_ref(x, lambda i: i[1], 0.25), scale=8)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize(
    ("shape", "groups"), [((2, 6, 3), 3), ((2, 4, 2, 2), 2), ((1, 4), 4), ((3, 2, 5), 1)], ids=str
)
def test_group_norm(shape, groups: int, dtype):
    x = data(shape, dtype, seed=28)
    size = shape[1] // groups
    want = norm_ref(x, lambda i: (i[0], i[1] // size), 1e-5)
    expect(f"hl.group_norm %a0 groups {groups} : {{0}}", [x], want, scale=8)


# --------------------------------------------------------------------------- programs, errors

PROGRAM = """
func.func @scale(%x: tensor<2x3xf32>, %k: tensor<f32>) -> tensor<2x3xf32> {
  %r = hl.mul %x, %k : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
func.func @main(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2xi32>) {
  %two = ll.const 2.0 : tensor<f32>
  %s = func.call @scale(%x, %two) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %y = hl.add %s, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %m = hl.max %y axes [1] : tensor<2x3xf32> -> tensor<2xf32>
  %i = hl.cast %m : tensor<2xf32> -> tensor<2xi32>
  func.return %y, %i : tensor<2x3xf32>, tensor<2xi32>
}
"""


def test_program_with_call_and_two_results():
    x = lit([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]], F32)
    b = lit([10.0, 20.0, 30.0], F32)
    y, i = run(parse(PROGRAM), [x, b])
    check(y, lit([[12.0, 24.0, 36.0], [8.0, 21.0, 38.0]], F32))
    check(i, lit([36, 38], I32))
    check(run(parse(PROGRAM), [x, lit(1.5, F32)], fn="scale")[0], x * 1.5)


def test_inputs_are_not_changed_or_aliased():
    text = "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
    text += "  func.return %x : tensor<2xf32>\n}"
    x = lit([1.0, 2.0], F32)
    (y,) = run(parse(text), (x,))
    y[0] = 5.0
    check(x, lit([1.0, 2.0], F32))


def test_rank_zero_result_is_an_array():
    out = run_op("hl.sum %a0 axes [0] : {0} -> {r}", [lit([1, 2, 3], I64)], "tensor<i64>")
    assert type(out) is np.ndarray
    check(out, lit(6, I64))
    scalar_in = run_op("hl.neg %a0 : {0}", [np.float32(2.0)], "tensor<f32>")  # a numpy scalar
    assert type(scalar_in) is np.ndarray
    check(scalar_in, lit(-2.0, F32))


@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        ([lit([[1.0] * 3] * 2, F32)], ValueError, r"@main takes 2 argument\(s\) .* got 1"),
        ([lit([[1.0] * 3] * 2, F32)] * 3, ValueError, "@main takes 2"),
        ([lit([1.0, 2.0, 3.0], F32), lit([1.0] * 3, F32)], ValueError,
         r"@main argument #0: expected tensor<2x3xf32> \(shape \(2, 3\), float32\), "
         r"got shape \(3,\) float32"),
        ([lit([[1.0] * 3] * 2, F32), lit([1.0] * 3, F64)], TypeError,
         r"@main argument #1: expected tensor<3xf32> \(shape \(3,\), float32\), "
         r"got shape \(3,\) float64"),
        ([lit([[1.0] * 3] * 2, F32), [1.0, 2.0, 3.0]], TypeError, "#1: .* got list"),
        (lit([1.0] * 3, F32), TypeError, "sequence of numpy arrays"),
    ],
)
def test_input_errors(inputs: Any, error: type[Exception], message: str):
    with pytest.raises(error, match=message):
        run(parse(PROGRAM), inputs)


def test_unknown_function():
    with pytest.raises(ValueError, match=r"no function @nope .*@scale, @main"):
        run(parse(PROGRAM), [], fn="nope")


def test_bad_module_is_reported():
    text = """func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
      %r = hl.neg %x : tensor<2xf32>
      %s = hl.reshape %r : tensor<2xf32> -> tensor<3xf32>
      func.return %s : tensor<3xf32>
    }"""
    with pytest.raises(IRError, match="cannot reshape"):
        run(parse(text), [lit([1.0, 2.0], F32)])


def test_conv2d_propagates_nan_and_inf_through_zero_weights() -> None:
    """0 * inf is NaN in IEEE arithmetic; a BLAS shortcut that skips zero factors is wrong."""
    x = np.array([0.0, np.inf, np.nan], np.float32).reshape(1, 1, 1, 3)
    w = np.zeros((1, 1, 1, 1), np.float32)
    got = run_op("hl.conv2d %a0, %a1 : {0}, {1} -> {r}", [x, w], ttype((1, 1, 1, 3), F32))
    np.testing.assert_array_equal(np.isnan(got).ravel(), [False, True, True])
