"""The reference interpreter on every `ll` op, against numpy written out in the tests.

`ll` operands never broadcast: every binary test uses equal shapes. Floats are
computed in float64 and rounded to the element type; ints and bools exactly.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from xdsl.dialects.builtin import TensorType, bf16, f16, f32, f64, i1, i32, i64

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
from irtensor import dtypes
from irtensor.dialects._base import format_scalar
from irtensor.interp import run
from irtensor.ir import parse
from irtensor.testing import Program, programs

pytestmark = pytest.mark.filterwarnings("error")  # NaN and inf must come out silently

ANY = [F32, F16, BF16, F64, I32, I64, I1]


# --------------------------------------------------------------------------- const


@pytest.mark.parametrize(
    ("text", "shape", "dtype", "fill"),
    [
        ("2.5", (2, 3), F32, 2.5),
        ("-inf", (4,), BF16, -INF),
        ("nan", (2, 2), F16, NAN),
        ("1.0e-300", (), F64, 1e-300),
        ("7", (3, 1), I32, 7),
        ("-9000000000", (2,), I64, -9_000_000_000),
        ("true", (2, 2), I1, True),
        ("false", (), I1, False),
        ("1.5", (0, 3), F32, 1.5),
    ],
    ids=str,
)
def test_const(text: str, shape, dtype, fill: Any):
    got = run_op(f"ll.const {text} : {{r}}", [], ttype(shape, dtype))
    check(got, np.full(shape, fill, dtype))


# --------------------------------------------------------------------------- unary

UNARY: list[tuple[str, Callable[[np.ndarray], Any], bool]] = [
    # name, float64 reference, positive inputs only
    ("neg", lambda x: -x, False),
    ("exp2", lambda x: 2.0**x, False),
    ("log2", lambda x: np.log(x) / math.log(2), True),
    ("sqrt", lambda x: x**0.5, True),
    ("reciprocal", lambda x: 1.0 / x, False),
    ("sin", np.sin, False),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize(("name", "ref", "positive"), UNARY, ids=ident)
def test_unary(name: str, ref: Callable[[np.ndarray], Any], positive: bool, dtype):
    x = data((3, 4), dtype, seed=1, low=0.1 if positive else -4, high=4)
    want = np.asarray(ref(x.astype(F64))).astype(dtype)
    expect(f"ll.{name} %a0 : {{0}}", [x], want)


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_neg_int_wraps(dtype):
    x = lit([-5, 0, 3, -(2**31)], dtype)
    expect("ll.neg %a0 : {0}", [x], np.array([5, 0, -3, 2**31]).astype(dtype))


SPECIAL = [NAN, INF, -INF, 0.0, -0.0, -1.0]


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=str)
@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("exp2", [NAN, INF, 0, 1, 1, 0.5]),
        ("log2", [NAN, INF, NAN, -INF, -INF, NAN]),
        ("sqrt", [NAN, INF, NAN, 0, 0, NAN]),
        ("reciprocal", [NAN, 0.0, -0.0, INF, -INF, -1]),
        ("sin", [NAN, NAN, NAN, 0, 0, math.sin(-1)]),
        ("neg", [NAN, -INF, INF, -0.0, 0.0, 1]),
    ],
    ids=ident,
)
def test_unary_nan_inf(name: str, want: list[float], dtype):
    got = run_op(f"ll.{name} %a0 : {{0}}", [lit(SPECIAL, dtype)], ttype((6,), dtype))
    check(got, lit(want, dtype))
    if name in ("reciprocal", "neg"):  # the sign of zero and infinity is part of the answer
        wanted = lit(want, F64)
        numbers = ~np.isnan(wanted)
        assert np.array_equal(np.signbit(got.astype(F64)[numbers]), np.signbit(wanted[numbers]))


@pytest.mark.parametrize(
    ("x", "to", "want"),
    [
        (lit([-1.7, 2.9, -0.2, 100.0], F32), I32, [-1, 2, 0, 100]),
        (lit([3, -4, 0], I64), F16, [3.0, -4.0, 0.0]),
        (lit([0.0, -0.0, 2.0, NAN], F64), I1, [False, False, True, True]),
        (lit([True, False], I1), I32, [1, 0]),
        (lit([True, False], I1), BF16, [1.0, 0.0]),
        (lit([1.0 / 3.0, 1e38], F64), BF16, [0.333984375, 1e38]),
        (lit([70000.0, -1.5], F32), F16, [INF, -1.5]),
        (lit([2**40 + 3, -7], I64), I32, [3, -7]),
        (lit([2**31 - 1], I32), I64, [2**31 - 1]),
    ],
    ids=str,
)
def test_cast(x: np.ndarray, to: np.dtype, want: list[Any]):
    expect("ll.cast %a0 : {0} -> {r}", [x], lit(want, to), scale=10)


# --------------------------------------------------------------------------- binary

PY_FLOORDIV = np.frompyfunc(operator.floordiv, 2, 1)  # Python ints: floor division
PY_MOD = np.frompyfunc(operator.mod, 2, 1)  # Python ints: sign of the divisor

BINARY: list[tuple[str, list[np.dtype], Callable[[Any, Any], Any]]] = [
    ("add", [*FLOATS, *INTS], lambda a, b: a + b),
    ("mul", [*FLOATS, *INTS], lambda a, b: a * b),
    ("max", ANY, lambda a, b: np.where(a > b, a, b)),
    ("idiv", INTS, lambda a, b: PY_FLOORDIV(a.astype(object), b.astype(object))),
    ("mod", INTS, lambda a, b: PY_MOD(a.astype(object), b.astype(object))),
]


@pytest.mark.parametrize("shape", [(2, 3), (), (5,), (0, 2)], ids=str)
@pytest.mark.parametrize(
    ("name", "dtype", "ref"), [(n, d, r) for n, ds, r in BINARY for d in ds], ids=ident
)
def test_binary(name: str, dtype, ref, shape):
    a, b = data(shape, dtype, seed=2, low=-6, high=6), data(shape, dtype, seed=3, low=-6, high=6)
    if name in ("idiv", "mod"):
        b[b == 0] = 4
    wide = F64 if dtype in RTOL else (I64 if dtype in INTS else I1)
    want = np.asarray(ref(a.astype(wide), b.astype(wide))).astype(dtype)
    expect(f"ll.{name} %a0, %a1 : {{r}}", [a, b], want, scale=2)


@pytest.mark.parametrize("dtype", [F32, BF16, F64], ids=str)
def test_max_nan_wins(dtype):
    a, b = lit([NAN, 1.0, -INF, 2.0], dtype), lit([0.0, NAN, INF, NAN], dtype)
    expect("ll.max %a0, %a1 : {r}", [a, b], lit([NAN, NAN, INF, NAN], dtype))


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_idiv_mod_floor_and_zero(dtype):
    a = lit([7, -7, 7, -7, 5, 0, -3, -9], dtype)
    b = lit([2, 2, -2, -2, 0, 0, 0, 3], dtype)
    expect("ll.idiv %a0, %a1 : {r}", [a, b], lit([3, -4, -4, 3, 0, 0, 0, -3], dtype))
    expect("ll.mod %a0, %a1 : {r}", [a, b], lit([1, 1, -1, -1, 0, 0, 0, 0], dtype))


def test_integer_overflow_wraps():
    a = lit([2**31 - 1, -(2**31), 2**30], I32)
    expect("ll.add %a0, %a1 : {r}", [a, a], lit([-2, 0, -(2**31)], I32))
    b = lit([2**62, -(2**63)], I64)
    expect("ll.mul %a0, %a1 : {r}", [b, lit([4, -1], I64)], lit([0, -(2**63)], I64))


@pytest.mark.parametrize("dtype", [F32, BF16, I32, I64, I1], ids=str)
@pytest.mark.parametrize(("name", "ref"), [("cmplt", operator.lt), ("cmpeq", operator.eq)])
def test_compare(name: str, ref: Callable[[Any, Any], Any], dtype):
    a, b = data((3, 4), dtype, seed=4, low=-2, high=2), data((3, 4), dtype, seed=5, low=-2, high=2)
    b[0] = a[0]  # some ties
    want = ref(a.astype(F64), b.astype(F64)).astype(I1)
    check(run_op(f"ll.{name} %a0, %a1 : {{0}} -> {{r}}", [a, b], ttype((3, 4), I1)), want)


def test_compare_nan():
    a, b = lit([NAN, 1.0, NAN, -INF, -0.0], F32), lit([1.0, NAN, NAN, -INF, 0.0], F32)
    got = run_op("ll.cmplt %a0, %a1 : {0} -> {r}", [a, b], "tensor<5xi1>")
    check(got, lit([False, False, False, False, False], I1))
    got = run_op("ll.cmpeq %a0, %a1 : {0} -> {r}", [a, b], "tensor<5xi1>")
    check(got, lit([False, False, False, True, True], I1))


@pytest.mark.parametrize("dtype", ANY, ids=str)
def test_where(dtype):
    c = lit([[True, False, True], [False, False, True]], I1)
    a, b = data((2, 3), dtype, seed=6), data((2, 3), dtype, seed=7)
    want = np.array([[a[i, j] if c[i, j] else b[i, j] for j in range(3)] for i in range(2)], dtype)
    expect("ll.where %a0, %a1, %a2 : {0}, {r}", [c, a, b], want)


# --------------------------------------------------------------------------- reduce


def reduce_ref(x: np.ndarray, axes: Sequence[int], kind: str) -> np.ndarray:
    """The reduction at each output position (reduced axes kept as size 1), in plain Python."""
    out_shape = tuple(1 if a in axes else d for a, d in enumerate(x.shape))
    ranges = [range(d) for a, d in enumerate(x.shape) if a in axes]
    wide = F64 if x.dtype in RTOL else (I64 if x.dtype in INTS else I1)
    out = np.zeros(out_shape, wide)
    for idx in np.ndindex(*out_shape):
        vals = []
        for inner in np.ndindex(*[len(r) for r in ranges]):
            it = iter(inner)
            src = tuple(next(it) if a in axes else i for a, i in enumerate(idx))
            vals.append(x[src].item() if x.dtype not in RTOL else float(x[src]))
        if kind == "sum":
            out[idx] = math.fsum(vals) if x.dtype in RTOL else sum(vals)
        elif any(v != v for v in vals):
            out[idx] = NAN
        else:
            out[idx] = max(vals, default=_lowest(x.dtype))
    return out.astype(x.dtype)


def _lowest(dtype: np.dtype) -> Any:
    return False if dtype == I1 else int(np.iinfo(dtype).min) if dtype in INTS else -INF


REDUCE_CASES = [
    ((2, 3, 4), (1,)),
    ((2, 3, 4), (0, 2)),
    ((2, 3, 4), ()),
    ((2, 3, 4), (2, 1, 0)),
    ((), ()),
    ((4,), (0,)),
    ((0, 3), (0,)),
    ((3, 0), (0,)),
    ((2, 0, 2), (1, 2)),
]


@pytest.mark.parametrize(("shape", "axes"), REDUCE_CASES, ids=str)
@pytest.mark.parametrize(
    ("kind", "dtype"),
    [("sum", d) for d in [F32, F16, BF16, F64, I32, I64]]
    + [("max", d) for d in [F32, BF16, I32, I64, I1]],
    ids=str,
)
def test_reduce(kind: str, dtype, shape, axes):
    x = data(shape, dtype, seed=8)
    op = f"ll.reduce {kind} %a0 axes {list(axes)} : {{0}} -> {{r}}"
    expect(op, [x], reduce_ref(x, axes, kind), scale=4)


def test_reduce_max_nan_and_nothing():
    x = lit([[1.0, NAN], [-INF, -INF]], F32)
    expect("ll.reduce max %a0 axes [1] : {0} -> {r}", [x], lit([[NAN], [-INF]], F32))
    empty = np.zeros((2, 0), I32)
    expect("ll.reduce max %a0 axes [1] : {0} -> {r}", [empty], lit([[-(2**31)], [-(2**31)]], I32))
    expect("ll.reduce sum %a0 axes [1] : {0} -> {r}", [empty], lit([[0], [0]], I32))


# --------------------------------------------------------------------------- movement

MOVE_DTYPES = [F32, BF16, I64, I1]


@pytest.mark.parametrize("dtype", MOVE_DTYPES, ids=str)
@pytest.mark.parametrize(
    ("shape", "new"), [((2, 6), (4, 3)), ((2, 3, 2), (12,)), ((1,), ()), ((0, 4), (2, 0))], ids=str
)
def test_reshape(shape, new, dtype):
    x = data(shape, dtype, seed=9)
    want = lit([x[i].item() for i in np.ndindex(*shape)], dtype).reshape(new)
    expect("ll.reshape %a0 : {0} -> {r}", [x], want)


@pytest.mark.parametrize("dtype", MOVE_DTYPES, ids=str)
def test_permute(dtype):
    x = data((2, 3, 4), dtype, seed=10)
    want = np.zeros((4, 2, 3), dtype)
    for i, j, k in np.ndindex(2, 3, 4):
        want[k, i, j] = x[i, j, k]
    expect("ll.permute %a0 [2, 0, 1] : {0} -> {r}", [x], want)
    expect("ll.permute %a0 [] : {0} -> {r}", [x[0, 0, 0].reshape(())], x[0, 0, 0].reshape(()))


@pytest.mark.parametrize("dtype", MOVE_DTYPES, ids=str)
def test_expand(dtype):
    x = data((3, 1), dtype, seed=11)
    want = np.array([[x[i, 0]] * 4 for i in range(3)], dtype)
    out = run_op("ll.expand %a0 : {0} -> {r}", [x], ttype((3, 4), dtype))
    check(out, want)
    out[0, 0] = out[1, 1]  # run returns writeable arrays, never read-only broadcast views
    y = data((1, 1, 2), dtype, seed=12)
    expect("ll.expand %a0 : {0} -> {r}", [y], np.array([[list(y[0, 0])] * 3] * 2, dtype))
    expect("ll.expand %a0 : {0} -> {r}", [x[:1]], np.zeros((1, 0), dtype))


@pytest.mark.parametrize(
    ("dtype", "low", "high", "value", "fill"),
    [
        (F32, (1, 0), (0, 2), 0.0, 0.0),
        (F32, (1, 1), (1, 1), -INF, -INF),
        (BF16, (0, 2), (1, 0), 2.5, 2.5),
        (F16, (1, 0), (0, 0), NAN, NAN),
        (I32, (1, 1), (0, 1), -INF, -(2**31)),
        (I32, (0, 0), (2, 0), -2.0, -2),
        (I64, (1, 0), (1, 0), INF, 2**63 - 1),
        (I1, (1, 0), (0, 1), -INF, False),
        (I1, (1, 0), (0, 1), 1.0, True),
        (I1, (1, 0), (0, 1), INF, True),
        (I1, (0, 1), (1, 0), 0.0, False),
        (F32, (0, 0), (0, 0), 9.0, 9.0),
    ],
    ids=str,
)
def test_pad(dtype, low, high, value: float, fill: Any):
    x = data((2, 2), dtype, seed=13)
    want = np.full((2 + low[0] + high[0], 2 + low[1] + high[1]), fill, dtype)
    for i, j in np.ndindex(2, 2):
        want[i + low[0], j + low[1]] = x[i, j]
    text = "1.0e30" if value == 1e30 else format_scalar(value)  # format_scalar gives 1e+30
    op = f"ll.pad %a0 low {list(low)} high {list(high)} value {text}"
    expect(op + " : {0} -> {r}", [x], want)


@pytest.mark.parametrize("dtype", MOVE_DTYPES, ids=str)
@pytest.mark.parametrize(
    ("starts", "limits"), [((0, 1), (2, 3)), ((1, 0), (4, 4)), ((2, 2), (2, 4)), ((0, 0), (4, 4))],
    ids=str,
)
def test_shrink(starts, limits, dtype):
    x = data((4, 4), dtype, seed=14)
    rows = [[x[i, j] for j in range(starts[1], limits[1])] for i in range(starts[0], limits[0])]
    want = np.array(rows, dtype).reshape(limits[0] - starts[0], limits[1] - starts[1])
    op = f"ll.shrink %a0 starts {list(starts)} limits {list(limits)} : {{0}} -> {{r}}"
    expect(op, [x], want)


@pytest.mark.parametrize("dtype", MOVE_DTYPES, ids=str)
@pytest.mark.parametrize(
    ("axes", "pick"),
    [((0,), lambda i, j: (1 - i, j)), ((1,), lambda i, j: (i, 2 - j)),
     ((0, 1), lambda i, j: (1 - i, 2 - j)), ((), lambda i, j: (i, j))],
    ids=ident,
)
def test_flip(axes, pick: Callable[[int, int], tuple[int, int]], dtype):
    x = data((2, 3), dtype, seed=15)
    want = np.array([[x[pick(i, j)] for j in range(3)] for i in range(2)], dtype)
    expect(f"ll.flip %a0 axes {list(axes)} : {{0}}", [x], want)


@pytest.mark.parametrize("dtype", MOVE_DTYPES, ids=str)
@pytest.mark.parametrize(
    ("shape", "strides"), [((5, 3), (2, 1)), ((6, 4), (3, 3)), ((4,), (5,)), ((0, 2), (2, 2))],
    ids=str,
)
def test_stride(shape, strides, dtype):
    x = data(shape, dtype, seed=16)
    kept = [range(0, d, s) for d, s in zip(shape, strides, strict=True)]
    want = np.array([x[i] for i in itertools.product(*kept)], dtype)
    want = want.reshape([len(r) for r in kept])
    expect(f"ll.stride %a0 {list(strides)} : {{0}} -> {{r}}", [x], want)


# --------------------------------------------------------------------------- programs

SOFTMAX = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %m = ll.reduce max %x axes [1] : tensor<2x3xf32> -> tensor<2x1xf32>
  %me = ll.expand %m : tensor<2x1xf32> -> tensor<2x3xf32>
  %nm = ll.neg %me : tensor<2x3xf32>
  %d = ll.add %x, %nm : tensor<2x3xf32>
  %log2e = ll.const 1.4426950408889634 : tensor<2x3xf32>
  %s = ll.mul %d, %log2e : tensor<2x3xf32>
  %e = ll.exp2 %s : tensor<2x3xf32>
  %t = ll.reduce sum %e axes [1] : tensor<2x3xf32> -> tensor<2x1xf32>
  %te = ll.expand %t : tensor<2x1xf32> -> tensor<2x3xf32>
  %rt = ll.reciprocal %te : tensor<2x3xf32>
  %r = ll.mul %e, %rt : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
"""


def test_softmax_program():
    x = lit([[1.0, 2.0, 3.0], [1000.0, -INF, 1000.0]], F32)
    (got,) = run(parse(SOFTMAX), [x])
    e = np.exp(np.array([[1.0, 2.0, 3.0]]) - 3.0)
    want = np.concatenate([e / e.sum(), [[0.5, 0.0, 0.5]]]).astype(F32)
    check(got, want, scale=4)


ALL_TYPES = (f16, bf16, f32, f64, i32, i64, i1)


def _check_program(program: Program) -> None:
    outs = run(program.module, program.inputs)
    main = program.module.ops.first
    result_types = main.function_type.outputs.data  # type: ignore[union-attr]
    assert len(outs) == len(result_types)
    for out, t in zip(outs, result_types, strict=True):
        assert isinstance(t, TensorType)
        assert out.shape == tuple(t.get_shape())
        assert out.dtype == dtypes.to_numpy(t.element_type)


@settings(max_examples=60, deadline=None)
@given(programs(dialect="ll", dtypes=ALL_TYPES))
def test_random_ll_programs_run_to_their_declared_types(program: Program):
    _check_program(program)


@settings(max_examples=60, deadline=None)
@given(programs(dialect="hl", dtypes=ALL_TYPES))
def test_random_hl_programs_run_to_their_declared_types(program: Program):
    _check_program(program)
