"""The elementwise math beyond the hl ops (frontend/elementwise.py) against numpy.

References run in float64 and round to the result dtype. Each test realizes its many
results as one program (`realize(*others)`), so a device compiles them together.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from conftest import BF16, F16, F32, F64, I32, I64, check
from irtensor import Tensor, dtypes

NP_OF = {dtypes.float32: F32, dtypes.float16: F16, dtypes.bfloat16: BF16, dtypes.float64: F64,
         dtypes.int32: I32, dtypes.int64: I64, dtypes.bool_: np.dtype(np.bool_)}
ERF = np.vectorize(math.erf, otypes=[F64])


def T(x: np.ndarray) -> Tensor:
    return Tensor(x, dtype=x.dtype)


def realize_all(outs: dict[str, Tensor]) -> dict[str, np.ndarray]:
    ts = list(outs.values())
    ts[0].realize(*ts[1:])
    return {k: t.numpy() for k, t in outs.items()}


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0, x)


# name, method, float64 reference, input range
UNARY: list[tuple[str, Callable[[Tensor], Tensor], Callable[[np.ndarray], np.ndarray],
                  float, float]] = [
    ("log10", Tensor.log10, np.log10, 0.01, 100),
    ("log1p", Tensor.log1p, np.log1p, -0.9, 5),
    ("expm1", Tensor.expm1, np.expm1, -3, 3),
    ("tan", Tensor.tan, np.tan, -1.4, 1.4),
    ("asin", Tensor.asin, np.arcsin, -1, 1),
    ("acos", Tensor.acos, np.arccos, -1, 1),
    ("atan", Tensor.atan, np.arctan, -20, 20),
    ("sinh", Tensor.sinh, np.sinh, -5, 5),
    ("cosh", Tensor.cosh, np.cosh, -5, 5),
    ("asinh", Tensor.asinh, np.arcsinh, -20, 20),
    ("acosh", Tensor.acosh, np.arccosh, 1, 20),
    ("atanh", Tensor.atanh, np.arctanh, -0.99, 0.99),
    ("erf", Tensor.erf, ERF, -5, 5),
    ("trunc", Tensor.trunc, np.trunc, -20, 20),
    ("floor", Tensor.floor, np.floor, -20, 20),
    ("ceil", Tensor.ceil, np.ceil, -20, 20),
    ("round", Tensor.round, np.round, -20, 20),
    ("sign", Tensor.sign, np.sign, -3, 3),
    ("square", Tensor.square, np.square, -3, 3),
    ("logsigmoid", Tensor.logsigmoid, lambda x: -_softplus(-x), -30, 30),
    ("hardsigmoid", Tensor.hardsigmoid, lambda x: np.clip(x / 6 + 0.5, 0, 1), -5, 5),
    ("elu", Tensor.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1), -3, 3),
    ("celu", lambda t: t.celu(2.0), lambda x: np.maximum(x, 0) +
     np.minimum(0, 2 * (np.exp(x / 2) - 1)), -3, 3),
    ("selu", Tensor.selu, lambda x: 1.0507 * np.where(x >= 0, x, 1.67326 * (np.exp(x) - 1)),
     -3, 3),
    ("swish", Tensor.swish, lambda x: x * _sigmoid(x), -5, 5),
    ("relu6", Tensor.relu6, lambda x: np.clip(x, 0, 6), -3, 9),
    ("hardswish", Tensor.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, -5, 5),
    ("hardtanh", Tensor.hardtanh, lambda x: np.clip(x, -1, 1), -3, 3),
    ("quick_gelu", Tensor.quick_gelu, lambda x: x * _sigmoid(1.702 * x), -3, 3),
    ("leaky_relu", lambda t: t.leaky_relu(0.1), lambda x: np.where(x < 0, 0.1 * x, x), -3, 3),
    ("mish", Tensor.mish, lambda x: x * np.tanh(_softplus(x)), -5, 5),
    ("softsign", Tensor.softsign, lambda x: x / (1 + np.abs(x)), -5, 5),
]
# functions with a half-integer or huge grid: their inputs include exact ties and steps
ROUNDING = {"trunc", "floor", "ceil", "round"}


def _inputs(low: float, high: float, dtype: np.dtype, name: str) -> np.ndarray:
    grid = np.linspace(low, high, 41)
    if name in ROUNDING:
        grid = np.concatenate([grid, np.arange(-6.5, 7, 0.5), [0.49999997, -0.49999997]])
    return grid.astype(dtype)


# one of each way of computing (the half-precision and shape tests compile fewer kernels)
FAMILIES = {"log10", "log1p", "atan", "asin", "sinh", "atanh", "erf", "round", "logsigmoid",
            "mish"}


def _check_unary(dtype: np.dtype, scale: float, names: set[str] | None = None) -> None:
    table = [u for u in UNARY if names is None or u[0] in names]
    inputs = {name: _inputs(lo, hi, dtype, name) for name, _, _, lo, hi in table}
    outs = realize_all({name: f(T(inputs[name])) for name, f, _, _, _ in table})
    for name, _, ref, _, _ in table:
        want = ref(inputs[name].astype(F64)).astype(dtype)
        got = outs[name]
        assert got.dtype == dtype, name
        try:
            check(got, want, scale)
        except AssertionError as e:
            raise AssertionError(f"{name} ({dtype}): {e}") from None


def test_unary_float32_matches_numpy_to_a_few_ulp() -> None:
    _check_unary(F32, 1)


def test_unary_float64_matches_numpy() -> None:
    _check_unary(F64, 10)


@pytest.mark.parametrize("dtype", [F16, BF16], ids=str)
def test_unary_half_precision_computes_in_float32_and_rounds_once(dtype: np.dtype) -> None:
    _check_unary(dtype, 1, FAMILIES)


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5,
                    1e-30, -1e-30, 3e38, -3e38], dtype=F32)
SPECIAL_REFS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "trunc": np.trunc, "floor": np.floor, "ceil": np.ceil, "round": np.round, "sign": np.sign,
    "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "sinh": np.sinh, "cosh": np.cosh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "erf": ERF,
    "log1p": np.log1p, "expm1": np.expm1, "log10": np.log10,
    "logsigmoid": lambda x: -np.logaddexp(0, -x),
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
}


def test_special_values_follow_numpy() -> None:
    """NaN, +-inf, +-0, the ends of the domains, ties for rounding, tiny and huge."""
    x = T(SPECIAL)
    outs = realize_all({name: getattr(x, name)() for name in SPECIAL_REFS})
    with np.errstate(all="ignore"):
        for name, ref in SPECIAL_REFS.items():
            want = ref(SPECIAL.astype(F64)).astype(outs[name].dtype)
            np.testing.assert_allclose(outs[name].astype(F64), want.astype(F64), rtol=2e-6,
                                       atol=0, err_msg=name)


def test_rounding_keeps_the_sign_of_zero_and_rounds_half_to_even() -> None:
    x = T(np.array([-0.5, -0.2, 0.5, 1.5, 2.5, -1.5, -2.5], dtype=F32))
    outs = realize_all({"trunc": x.trunc(), "round": x.round(), "ceil": x.ceil()})
    assert outs["round"].tolist() == [-0.0, -0.0, 0.0, 2.0, 2.0, -2.0, -2.0]
    assert np.signbit(outs["trunc"][:2]).all() and np.signbit(outs["ceil"][:2]).all()


def test_classification_of_ints_and_floats() -> None:
    i = Tensor([1, -2, 3])
    f = T(np.array([np.nan, np.inf, -np.inf, 1.0], dtype=F32))
    outs = realize_all({"i_nan": i.isnan(), "i_inf": i.isinf(), "i_fin": i.isfinite(),
                        "pos": f.isinf(detect_negative=False),
                        "neg": f.isinf(detect_positive=False)})
    assert outs["i_nan"].tolist() == [False] * 3 and outs["i_inf"].tolist() == [False] * 3
    assert outs["i_fin"].tolist() == [True] * 3
    assert outs["pos"].tolist() == [False, True, False, False]
    assert outs["neg"].tolist() == [False, False, True, False]


def test_int_inputs_compute_as_the_default_float_and_rounding_keeps_ints() -> None:
    x = Tensor([-3, 0, 2, 7])
    assert x.erf().dtype is dtypes.float32 and x.atan().dtype is dtypes.float32
    assert x.round() is x and x.floor() is x and x.ceil() is x and x.trunc() is x
    assert x.sign().dtype is dtypes.int32
    outs = realize_all({"atan": x.atan(), "sign": x.sign(), "square": x.square()})
    check(outs["atan"], np.arctan(np.array([-3, 0, 2, 7], dtype=F64)).astype(F32))
    assert outs["sign"].tolist() == [-1, 0, 1, 1] and outs["square"].tolist() == [9, 0, 4, 49]


@pytest.mark.parametrize("shape", [(), (2, 0, 3)], ids=str)
def test_empty_and_0d_shapes(shape: tuple[int, ...]) -> None:
    x = Tensor(np.full(shape, 0.25, dtype=F32))
    table = [u for u in UNARY if u[0] in FAMILIES]
    outs = realize_all({name: f(x) for name, f, _, _, _ in table})
    for name, _, ref, _, _ in table:
        assert outs[name].shape == shape, name
        with np.errstate(invalid="ignore"):  # acosh(0.25) is NaN
            want = np.asarray(ref(np.full(shape, 0.25))).astype(F32)
        check(outs[name], want)


# --------------------------------------------------------------------------- binary


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_fmod_and_mod_follow_c_and_python_sign_rules(dtype: np.dtype) -> None:
    a = np.array([[7.5, -7.5, 7.5, -7.5, 0.3, -0.0, 5.0, 1.0, np.inf, 3.0]], dtype=dtype)
    b = np.array([[2.0], [-2.0], [0.1]], dtype=dtype)
    c = np.array([2.0, 2.0, -2.0, -2.0, 0.1, 1.0, 0.0, np.inf, 2.0, np.nan], dtype=dtype)
    outs = realize_all({"fmod": T(a).fmod(T(b)), "mod": T(a).mod(T(b)),
                        "fmod_c": T(a[0]).fmod(T(c)), "mod_c": T(a[0]).mod(T(c)),
                        "scalar": T(a).mod(3)})
    with np.errstate(all="ignore"):
        check(outs["fmod"], np.fmod(a, b))
        check(outs["mod"], np.remainder(a, b))
        check(outs["fmod_c"], np.fmod(a[0], c))
        check(outs["mod_c"][:8], np.remainder(a[0], c)[:8])  # numpy's inf % 2 is NaN too
        check(outs["scalar"], np.remainder(a, dtype.type(3)))


def test_integer_fmod_and_mod() -> None:
    a = np.array([7, -7, 7, -7, 0, 5], dtype=I32)
    b = np.array([2, 2, -2, -2, 3, 0], dtype=I32)
    outs = realize_all({"fmod": T(a).fmod(T(b)), "mod": T(a).mod(T(b))})
    assert outs["fmod"].tolist() == [1, -1, 1, -1, 0, 0]  # 5 fmod 0: 0 as numpy's ints
    with np.errstate(divide="ignore"):
        assert outs["mod"].tolist() == np.remainder(a, b).tolist()


def test_copysign_logaddexp_lerp_clamp_broadcast() -> None:
    x = np.array([[1.5, -2.0, 0.0, np.inf]], dtype=F32)
    y = np.array([[-0.0], [3.0], [-np.inf]], dtype=F32)
    big = np.array([1000.0, -1000.0, -np.inf, np.inf, 0.0], dtype=F32)
    outs = realize_all({
        "copysign": T(x).copysign(T(y)), "copysign_s": T(x).copysign(-1),
        "lae": T(big).logaddexp(T(big[::-1].copy())), "lae_b": T(x).logaddexp(T(y)),
        "lerp": T(x[:, :3]).lerp(T(y), 0.25), "clamp": T(x).clamp(-1, 1),
        "clamp_t": T(x).clamp(min_=T(y)), "clamp_hi": T(x).clamp(max_=0.5)})
    with np.errstate(all="ignore"):
        check(outs["copysign"], np.copysign(x, y))
        check(outs["copysign_s"], np.copysign(x, -1).astype(F32))
        check(outs["lae"], np.logaddexp(big, big[::-1]))
        check(outs["lae_b"], np.logaddexp(x, y))
        check(outs["lerp"], x[:, :3] + (y - x[:, :3]) * np.float32(0.25))
        check(outs["clamp"], np.clip(x, -1, 1))
        check(outs["clamp_t"], np.maximum(x, y))
        check(outs["clamp_hi"], np.minimum(x, np.float32(0.5)))


def test_clamp_needs_a_bound_and_fmod_numbers() -> None:
    with pytest.raises(ValueError, match="at least one of min_ and max_"):
        Tensor([1.0]).clamp()
    with pytest.raises(TypeError, match="fmod needs numeric tensors, got bool"):
        Tensor([True]).fmod(Tensor([False]))


def test_against_torch_when_installed() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    x = np.linspace(-4, 4, 33).astype(F32)
    pairs = {"erf": torch.erf, "asinh": torch.asinh, "round": torch.round, "mish":
             torch.nn.functional.mish, "selu": torch.nn.functional.selu,
             "logsigmoid": torch.nn.functional.logsigmoid}
    outs = realize_all({name: getattr(T(x), name)() for name in pairs})
    for name, f in pairs.items():
        np.testing.assert_allclose(outs[name], f(torch.from_numpy(x)).numpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=name)
