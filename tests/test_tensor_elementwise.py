"""Elementwise Tensor ops against numpy: values, shape and dtype.

Covers the unary math ops, the arithmetic and comparison operators with
broadcasting and Python scalars on either side, dtype promotion, logical ops,
where/clip/maximum/minimum, `x += y` rebinding, and the errors raised at the
call that made the mistake. References are computed in float64 and rounded to
the result dtype; `conftest.check` compares values within that dtype's tolerance.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import BF16, F16, F32, F64, I1, I32, I64, check, data, ident
from irtensor import Tensor, dtypes

NP_OF = {dtypes.float32: F32, dtypes.float16: F16, dtypes.bfloat16: BF16, dtypes.float64: F64,
         dtypes.int32: I32, dtypes.int64: I64, dtypes.bool_: I1}


def T(x: np.ndarray) -> Tensor:
    """A tensor of x's own dtype (a float64 or int64 array would default to float32/int32)."""
    return Tensor(x, dtype=x.dtype)


def f64(x: np.ndarray) -> np.ndarray:
    return x.astype(F64)


def expect(t: Tensor, want: np.ndarray, scale: float = 1.0) -> None:
    """The tensor's shape and dtype before realizing, then its values."""
    assert t.shape == want.shape, f"shape {t.shape}, expected {want.shape}"
    assert NP_OF[t.dtype] == want.dtype, f"dtype {t.dtype}, expected {want.dtype}"
    check(t.numpy(), want, scale)


# --------------------------------------------------------------------------- unary


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


# name, Tensor method, numpy in float64, low, high (input range), tolerance scale
UNARY: list[tuple[str, Callable[[Tensor], Tensor], Callable[[np.ndarray], np.ndarray],
                  float, float, float]] = [
    ("neg", lambda t: -t, np.negative, -3, 3, 1),
    ("neg_method", Tensor.neg, np.negative, -3, 3, 1),
    ("abs", Tensor.abs, np.abs, -3, 3, 1),
    ("relu", Tensor.relu, lambda x: np.maximum(x, 0), -3, 3, 1),
    ("exp", Tensor.exp, np.exp, -3, 3, 2),
    ("exp2", Tensor.exp2, np.exp2, -3, 3, 2),
    ("log", Tensor.log, np.log, 0.1, 5, 2),
    ("log2", Tensor.log2, np.log2, 0.1, 5, 2),
    ("sqrt", Tensor.sqrt, np.sqrt, 0, 5, 1),
    ("rsqrt", Tensor.rsqrt, lambda x: 1 / np.sqrt(x), 0.1, 5, 2),
    ("reciprocal", Tensor.reciprocal, np.reciprocal, 0.5, 5, 1),
    ("sin", Tensor.sin, np.sin, -3, 3, 2),
    ("cos", Tensor.cos, np.cos, -3, 3, 2),
    ("sigmoid", Tensor.sigmoid, _sigmoid, -5, 5, 2),
    ("tanh", Tensor.tanh, np.tanh, -3, 3, 2),
    ("gelu", Tensor.gelu, _gelu, -3, 3, 4),
    ("silu", Tensor.silu, lambda x: x * _sigmoid(x), -3, 3, 4),
    ("softplus", Tensor.softplus, lambda x: np.log1p(np.exp(x)), -3, 3, 4),
]


@pytest.mark.parametrize("dtype", [F32, F16, BF16, F64], ids=str)
@pytest.mark.parametrize(("name", "fn", "ref", "low", "high", "scale"), UNARY,
                         ids=[u[0] for u in UNARY])
def test_unary_float(name: str, fn: Callable, ref: Callable, low: float, high: float,
                     scale: float, dtype: np.dtype) -> None:
    x = data((3, 4), dtype, seed=1, low=low, high=high)
    # half-precision results are rounded twice (op by op), so allow a few ulps more
    extra = 4 if dtype in (F16, BF16) and name in ("gelu", "silu", "softplus") else 1
    expect(fn(T(x)), ref(f64(x)).astype(dtype), scale * extra)


@pytest.mark.parametrize("name", ["exp", "log2", "sqrt", "sin", "sigmoid", "tanh", "gelu"])
def test_unary_float_op_on_ints_gives_float32(name: str) -> None:
    """tinygrad (not numpy, which gives float64): int inputs compute in the default float."""
    x = np.array([[1, 2, 3], [4, 5, 6]], I32)
    ref = dict((u[0], u[2]) for u in UNARY)[name]
    expect(getattr(T(x), name)(), ref(f64(x)).astype(F32), 4)


@pytest.mark.parametrize("dtype", [I32, I64], ids=str)
def test_int_unary_keep_dtype(dtype: np.dtype) -> None:
    x = np.array([-3, -1, 0, 2, 7], dtype)
    expect(-T(x), -x)
    expect(T(x).abs(), np.abs(x))
    expect(T(x).relu(), np.maximum(x, 0).astype(dtype))


def test_bool_abs_and_neg() -> None:
    """abs of bool is itself; -bool is logical not (tinygrad; numpy raises)."""
    b = np.array([True, False, True])
    expect(T(b).abs(), b)
    expect(-T(b), ~b)


def test_softplus_beta() -> None:
    x = data((5,), F32, seed=2)
    expect(T(x).softplus(beta=2.0), (np.log1p(np.exp(2 * f64(x))) / 2).astype(F32), 4)


# --------------------------------------------------------------------------- binary

BINARY: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
    ("truediv", operator.truediv), ("maximum", lambda a, b: _maximum(a, b)),
    ("minimum", lambda a, b: _minimum(a, b)),
]


def _maximum(a: Any, b: Any) -> Any:
    return a.maximum(b) if isinstance(a, Tensor) else np.maximum(a, b)


def _minimum(a: Any, b: Any) -> Any:
    return a.minimum(b) if isinstance(a, Tensor) else np.minimum(a, b)


SHAPE_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 5)), ((2, 1, 3), (4, 1)),
               ((), (3, 2)), ((3, 1), ()), ((1,), (0, 1)), ((2, 0, 3), (1, 3))]


@pytest.mark.parametrize(("sa", "sb"), SHAPE_PAIRS, ids=ident)
@pytest.mark.parametrize(("name", "op"), BINARY, ids=[b[0] for b in BINARY])
def test_binary_broadcasting_f32(name: str, op: Callable, sa: tuple, sb: tuple) -> None:
    a, b = data(sa, F32, seed=3), data(sb, F32, seed=4, low=0.5, high=3)
    expect(op(T(a), T(b)), op(f64(a), f64(b)).astype(F32))


@pytest.mark.parametrize("dtype", [I32, I64], ids=str)
@pytest.mark.parametrize(("name", "op"), [("add", operator.add), ("sub", operator.sub),
                                          ("mul", operator.mul), ("floordiv", operator.floordiv),
                                          ("mod", operator.mod)])
def test_binary_int(name: str, op: Callable, dtype: np.dtype) -> None:
    a = np.array([[7, -7, 5], [-9, 0, 13]], dtype)
    b = np.array([2, 3, -4], dtype)
    expect(op(T(a), T(b)), op(a, b))
    expect(op(T(a), 3), op(a, dtype.type(3)))


def test_int_truediv_is_float32() -> None:
    """tinygrad: int / int divides as the default float (numpy gives float64)."""
    a, b = np.array([7, -7, 1], I32), np.array([2, 4, 3], I32)
    expect(T(a) / T(b), (f64(a) / f64(b)).astype(F32))
    expect(T(a) / 2, (f64(a) / 2).astype(F32))
    expect(6 / T(b), (6 / f64(b)).astype(F32))


@pytest.mark.parametrize("scalar", [2, 2.5, -1.25])
@pytest.mark.parametrize(("name", "op"), [("add", operator.add), ("sub", operator.sub),
                                          ("mul", operator.mul), ("truediv", operator.truediv),
                                          ("pow", operator.pow)])
def test_python_scalar_both_sides(name: str, op: Callable, scalar: float) -> None:
    x = data((2, 3), F32, seed=5, low=0.5, high=2)
    with np.errstate(invalid="ignore"):  # (-1.25) ** x is NaN on both sides
        expect(op(T(x), scalar), op(f64(x), scalar).astype(F32), 2)
        expect(op(scalar, T(x)), op(scalar, f64(x)).astype(F32), 2)


def test_method_spellings() -> None:
    a, b = data((3,), F32, seed=6), data((3,), F32, seed=7, low=1, high=2)
    ta, tb = T(a), T(b)
    expect(ta.add(tb), a + b)
    expect(ta.sub(tb), a - b)
    expect(ta.mul(tb), a * b)
    expect(ta.div(tb), (f64(a) / f64(b)).astype(F32))
    expect(tb.pow(ta), (f64(b) ** f64(a)).astype(F32), 2)


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 5, 16])
def test_pow_small_int_exponent_exact(exponent: int) -> None:
    """Small non-negative int exponents multiply: exact, and ints stay ints."""
    x = np.array([-3, -1, 0, 1, 2], I64)
    expect(T(x) ** exponent, x**exponent)
    xf = np.array([-1.5, 0.5, 2.0], F32)
    expect(T(xf) ** exponent, (f64(xf) ** exponent).astype(F32), 8)


def test_pow_fractional_and_tensor_exponents() -> None:
    x, y = np.array([0.5, 1.0, 4.0], F32), np.array([2.0, -1.0, 0.5], F32)
    expect(T(x) ** 0.5, np.sqrt(x))
    expect(T(x) ** T(y), (f64(x) ** f64(y)).astype(F32))
    expect(2 ** T(y), (2 ** f64(y)).astype(F32))
    expect(Tensor(np.array([1, 2, 3], I32)) ** -1, np.array([1, 0.5, 1 / 3], F32))


COMPARE = [("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
           ("eq", operator.eq), ("ne", operator.ne)]


@pytest.mark.parametrize(("name", "op"), COMPARE, ids=[c[0] for c in COMPARE])
@pytest.mark.parametrize("dtype", [F32, I32, I64, F16], ids=str)
def test_comparisons(name: str, op: Callable, dtype: np.dtype) -> None:
    a = np.array([[1, 2, 3], [3, 2, 1]], dtype)
    b = np.array([2, 2, 2], dtype)
    expect(op(T(a), T(b)), op(a, b))
    expect(op(T(a), 2), op(a, 2))
    expect(op(2, T(a)), op(2, a))  # reflected: 2 < t is t > 2
    expect(op(T(a), 2.5), op(a, 2.5))  # int tensor against a float scalar


def test_comparison_promotes_operands() -> None:
    a, b = np.array([1, 2, 3], I32), np.array([1.5, 2.0, 2.5], F32)
    expect(T(a) < T(b), a < b)
    expect(T(a) == T(b), a == b)


# --------------------------------------------------------------------------- promotion

PROMOTE: dict[tuple[str, str], str] = {
    ("int32", "float32"): "float32", ("int32", "int64"): "int64",
    ("float16", "bfloat16"): "float32", ("bool", "bool"): "bool",
    ("bool", "int32"): "int32", ("bool", "float16"): "float16", ("int64", "float16"): "float16",
    ("float32", "float64"): "float64", ("int64", "bfloat16"): "bfloat16",
    ("float16", "float32"): "float32", ("bfloat16", "float64"): "float64",
}


@pytest.mark.parametrize(("da", "db"), list(PROMOTE), ids=ident)
def test_tensor_tensor_promotion(da: str, db: str) -> None:
    want = NP_OF[dtypes.as_dtype(PROMOTE[(da, db)])]
    a = data((2, 3), NP_OF[dtypes.as_dtype(da)], seed=8)
    b = data((3,), NP_OF[dtypes.as_dtype(db)], seed=9)
    for x, y in ((a, b), (b, a)):
        got = T(x) + T(y)
        if want == I1:  # numpy: True + True is True (logical or)
            expect(got, np.logical_or(x, y))
        else:
            expect(got, (f64(x) + f64(y)).astype(want), 2)
    assert dtypes.promote(dtypes.as_dtype(da), dtypes.as_dtype(db)).name == PROMOTE[(da, db)]


@pytest.mark.parametrize(("dtype", "scalar", "want"), [
    (I32, 1.5, F32),  # int tensor + float scalar: the default float
    (I64, 1.5, F32),  # tinygrad/torch (numpy 2 gives float64)
    (I32, 2, I32), (I64, 2, I64),  # an int scalar takes the int tensor's dtype
    (F16, 2.5, F16), (BF16, 2.5, BF16), (F64, 2.5, F64),  # a float scalar takes the float's
    (I1, 2, I32), (I1, 0.5, F32),  # bool tensor + number: the number's default dtype
], ids=ident)
def test_scalar_promotion(dtype: np.dtype, scalar: float, want: np.dtype) -> None:
    x = data((4,), dtype, seed=10)
    ref = (f64(x) + scalar).astype(want)
    expect(T(x) + scalar, ref)
    expect(scalar + T(x), ref)
    expect(T(x) * scalar, (f64(x) * scalar).astype(want))


def test_bool_arithmetic_is_logical() -> None:
    """numpy: bool + bool is or, bool * bool is and; both stay bool."""
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    expect(T(a) + T(b), a + b)
    expect(T(a) + True, a + True)
    expect(T(a) * T(b), a * b)


# --------------------------------------------------------------------------- logical, where, clip


def test_logical_ops_on_bool() -> None:
    a = np.array([[True, False], [True, True]])
    b = np.array([True, False])
    ta, tb = T(a), T(b)
    expect(ta & tb, a & b)
    expect(ta | tb, a | b)
    expect(ta ^ tb, a ^ b)
    expect(~ta, ~a)
    expect(ta.logical_not(), ~a)
    expect(ta & True, a & True)
    expect(False | ta, False | a)
    expect((Tensor([1.0, 2.0]) > 1.5) & (Tensor([3.0, 4.0]) < 3.5), np.array([False, False]))


@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor])
def test_logical_ops_on_floats_raise(op: Callable) -> None:
    with pytest.raises(TypeError, match="bool"):
        op(Tensor([1.0, 2.0]), Tensor([1.0, 0.0]))
    with pytest.raises(TypeError, match="bool"):
        op(Tensor([1.0, 2.0]), True)
    # on integers they are bitwise, a bool scalar counting as 0 or 1 (as numpy)
    assert op(Tensor([1, 2]), True).numpy().tolist() == op(np.array([1, 2]), True).tolist()


def test_logical_not_on_float_raises() -> None:
    with pytest.raises(TypeError, match="bool"):
        Tensor([1.0]).logical_not()


def test_where_broadcasts_three_ways() -> None:
    c = np.array([[True], [False]])
    x = data((2, 3), F32, seed=11)
    y = data((3,), F32, seed=12)
    expect(T(c).where(T(x), T(y)), np.where(c, x, y))
    expect(T(c).where(T(x), 0.5), np.where(c, x, F32.type(0.5)))
    expect(T(c).where(-1.0, T(y)), np.where(c, F32.type(-1), y))
    expect(T(c).where(1, 0), np.where(c, 1, 0).astype(I32))
    expect(T(c).where(1, 0.5), np.where(c, 1, 0.5).astype(F32))


def test_where_on_numeric_condition_and_mixed_dtypes() -> None:
    c = np.array([0, 2, -1], I32)
    a, b = np.array([1, 2, 3], I32), np.array([0.5, 0.5, 0.5], F32)
    expect(T(c).where(T(a), T(b)), np.where(c != 0, a, b).astype(F32))


@pytest.mark.parametrize(("lo", "hi"), [(-1.0, 1.0), (0, None), (None, 0.5), (-0.5, -0.5)])
def test_clip(lo: float | None, hi: float | None) -> None:
    x = data((3, 4), F32, seed=13)
    expect(T(x).clip(lo, hi), np.clip(x, lo, hi).astype(F32))


def test_maximum_minimum_with_scalars_and_ints() -> None:
    x = np.array([-2, 0, 5], I32)
    expect(T(x).maximum(1), np.maximum(x, 1).astype(I32))
    expect(T(x).minimum(0.5), np.minimum(f64(x), 0.5).astype(F32))
    b = np.array([True, False])
    expect(T(b).maximum(Tensor([False, False])), b)


# --------------------------------------------------------------------------- rebinding


def test_iadd_rebinds_lazily_and_leaves_aliases_alone() -> None:
    x = Tensor([1.0, 2.0])
    alias = x
    x += 1
    x *= Tensor([2.0, 3.0])
    x -= 0.5
    x /= 2
    assert x is not alias
    expect(x, np.array([(2 * 2 - 0.5) / 2, (3 * 3 - 0.5) / 2], F32))
    expect(alias, np.array([1.0, 2.0], F32))


# --------------------------------------------------------------------------- errors


def test_broadcast_mismatch_names_both_shapes() -> None:
    a, b = Tensor.ones(2, 3), Tensor.ones(4, 3)
    for op in (operator.add, operator.mul, operator.lt, _maximum):
        with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 3\)"):
            op(a, b)
    with pytest.raises(ValueError, match=r"\(2, 1\).*\(3,\).*\(4,\)"):
        Tensor.ones(2, 1, dtype="bool").where(Tensor.ones(3), Tensor.ones(4))


def test_integer_only_ops_reject_floats() -> None:
    with pytest.raises(TypeError, match="float32"):
        Tensor([1.0]) // 2
    with pytest.raises(TypeError, match="float32"):
        Tensor([1]) % 2.5


def test_bool_subtraction_raises_type_error() -> None:
    """numpy raises TypeError for bool - bool; so does the frontend, at the call."""
    with pytest.raises(TypeError, match=r"hl\.sub.*i1"):
        Tensor([True]) - Tensor([False])
    with pytest.raises(TypeError, match=r"hl\.relu.*i1"):
        Tensor([True]).relu()


# --------------------------------------------------------------------------- hypothesis

DTYPES_ARITH = [F32, F64, I32, I64]
OPS_H = [operator.add, operator.sub, operator.mul, _maximum, _minimum, operator.lt,
         operator.eq]


@st.composite
def broadcast_case(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, Callable]:
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                    min_side=0, max_side=4))
    dtype = draw(st.sampled_from(DTYPES_ARITH))
    elements = st.integers(-50, 50) if dtype in (I32, I64) else st.floats(-50, 50, width=32)
    a = draw(hnp.arrays(dtype, shapes.input_shapes[0], elements=elements))
    b = draw(hnp.arrays(dtype, shapes.input_shapes[1], elements=elements))
    return a, b, draw(st.sampled_from(OPS_H))


@given(broadcast_case())
def test_hypothesis_broadcasting_binary(case: tuple[np.ndarray, np.ndarray, Callable]) -> None:
    a, b, op = case
    want = np.asarray(op(a, b))
    expect(op(T(a), T(b)), want)


@given(hnp.arrays(F32, hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
                  elements=st.floats(-20, 20, width=32)),
       st.sampled_from([1, -2, 0.5, 3.25]),
       st.sampled_from([operator.add, operator.sub, operator.mul]))
def test_hypothesis_scalar_sides(x: np.ndarray, s: float, op: Callable) -> None:
    expect(op(T(x), s), op(f64(x), s).astype(F32))
    expect(op(s, T(x)), op(s, f64(x)).astype(F32))


@given(hnp.arrays(F32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.floats(-4, 4, width=32)),
       st.sampled_from(["exp", "tanh", "sigmoid", "relu", "abs", "sin"]))
def test_hypothesis_unary(x: np.ndarray, name: str) -> None:
    ref = dict((u[0], u[2]) for u in UNARY)[name]
    expect(getattr(T(x), name)(), ref(f64(x)).astype(F32), 2)


def test_bfloat16_is_ml_dtypes() -> None:
    t = Tensor([1.5, 2.5], dtype="bfloat16") * 2
    out = t.numpy()
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.astype(F32), [3.0, 5.0])
