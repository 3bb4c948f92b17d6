"""The vector math of convert-to-llvm (exp2 exp log2 log sin cos on f32, f16, bf16):
ulp error over a dense sweep of f32 bit patterns, against the exact result (numpy
in f64) and against numpy's own f32 functions; special values as numpy has them;
the code is vectorized (no libm calls, zmm registers on AVX-512 hosts).

The kernels go through the real lowering (`convert-to-llvm` and the LLVM JIT),
and, for the functions the frontend keeps (exp2 log2 sin), through the Tensor
frontend on device llvm.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest

from irtensor import Tensor
from irtensor.frontend import realize
from irtensor.ir import parse
from irtensor.passes.llvm import jit as llvm_jit
from irtensor.runtime import llvm_device

BF16 = np.dtype(ml_dtypes.bfloat16)
IR_TYPES = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", BF16: "bf16",
            np.dtype(np.float64): "f64"}
FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp2": np.exp2, "exp": np.exp, "log2": np.log2, "log": np.log, "sin": np.sin,
    "cos": np.cos,
}
# Largest error, in ulps of the f32 result, from the exact result; measured over all
# 2^32 inputs: exp2 0.878, exp 0.896, log2 0.955, log 0.824, sin 0.5013, cos 0.5001.
EXACT_ULPS = {"exp2": 0.88, "exp": 0.9, "log2": 0.96, "log": 0.83, "sin": 0.502,
              "cos": 0.502}
# numpy's own f32 functions are less exact (on the sweep, from the exact result: exp2
# 2.49 ulps, exp 2.25, log2 1.85, log 3.53, sin 1.39, cos 1.39); ours is within this
# many ulps of numpy's result.
NUMPY_ULPS = {"exp2": 3.0, "exp": 2.0, "log2": 2.0, "log": 4.0, "sin": 1.0, "cos": 1.0}
STRIDE = 1009  # every 1009th f32 bit pattern: about 4.3 million inputs per function

EDGES = np.array([
    0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, -np.nan,
    1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38, 1.1754944e-38, 3.4028235e38,
    -3.4028235e38, 127.99999, 128.0, 128.5, 88.72283, 88.72284, -87.33654, -103.97,
    -104.0, -126.0, -126.5, -127.0, -149.0, -149.5, -149.99, -150.0, -150.01, -151.0,
    -1000.0, 1000.0, 0.9999999, 1.0000001, np.pi, -np.pi, np.pi / 2, 1e4, 1e5, 1e6,
    3.0e8, 1e15, 2.0**50, 2.0**50 + 2.0**27, 1e20, 1e30, 1.7e38, 1e-10, -1e-10, 1e-30,
], np.float32)


def kernel_text(name: str, t: str, n: int) -> str:
    return f"""func.func @k(%x: memref<{n}x{t}>, %o: memref<{n}x{t}>, %start: index,
                            %stop: index) attributes {{irtensor.kernel}} {{
      %c1 = arith.constant 1 : index
      scf.for %i = %start to %stop step %c1 {{
        %a = memref.load %x[%i] : memref<{n}x{t}>
        %r = math.{name} %a : {t}
        memref.store %r, %o[%i] : memref<{n}x{t}>
      }}
      func.return
    }}"""


@functools.cache
def compiled(name: str, t: str, n: int) -> llvm_jit.JitModule:
    return llvm_jit.compile_module(parse(kernel_text(name, t, n)))


def run(name: str, x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    compiled(name, IR_TYPES[x.dtype], len(x)).function("k")(x, out, 0, len(x))
    return out


def quiet(fn: Callable[[], np.ndarray]) -> np.ndarray:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def sweep() -> np.ndarray:
    bits = np.arange(0, 2**32, STRIDE, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits.view(np.float32), EDGES])


def ulp_error(got: np.ndarray, want: np.ndarray, mantissa_bits: int = 24,
              min_exponent: int = -126) -> np.ndarray:
    """|got - want| in units of the last place of `want`'s binade (want in f64, often
    exact); 0 where either is not finite or want is beyond the type's range."""
    g, w = quiet(lambda: got.astype(np.float64)), quiet(lambda: want.astype(np.float64))
    finite = np.isfinite(g) & np.isfinite(w)
    _, exponent = np.frexp(np.abs(w[finite]))
    ulp = np.ldexp(1.0, np.maximum(exponent - 1, min_exponent) - (mantissa_bits - 1))
    error = np.zeros(g.shape)
    error[finite] = np.abs(g[finite] - w[finite]) / ulp
    return error


def assert_specials_match(got: np.ndarray, want: np.ndarray, x: np.ndarray, what: str,
                          exact: np.ndarray | None = None) -> None:
    """NaN where numpy has NaN; infinities and zeros (with their sign) where numpy has
    them, or where the exact result rounds to them (numpy's exp2 flushes 2^-149.6 to 0)."""
    g, w = quiet(lambda: got.astype(np.float64)), quiet(lambda: want.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{what}: NaN at {x}")
    special = ~np.isnan(w) & (np.isinf(w) | (w == 0) | np.isinf(g) | (g == 0))
    if exact is not None:
        rounded = quiet(lambda: exact.astype(got.dtype).astype(np.float64))
        w = np.where((g == rounded) & (np.signbit(g) == np.signbit(rounded)), rounded, w)
    np.testing.assert_array_equal(g[special], w[special], err_msg=f"{what}: {x[special]}")
    np.testing.assert_array_equal(np.signbit(g[special]), np.signbit(w[special]),
                                  err_msg=f"{what}: sign of zero")


# --------------------------------------------------------------------------- f32


@pytest.fixture(scope="module")
def f32_sweep() -> np.ndarray:
    return sweep()


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_f32_ulps_over_a_dense_sweep(name: str, f32_sweep: np.ndarray) -> None:
    x = f32_sweep
    got = run(name, x)
    numpy_f32 = quiet(lambda: FUNCTIONS[name](x))
    exact = quiet(lambda: FUNCTIONS[name](x.astype(np.float64)))
    from_exact = ulp_error(got, exact).max()
    from_numpy = ulp_error(got, numpy_f32).max()
    assert from_exact <= EXACT_ULPS[name], f"{name}: {from_exact} ulp from the exact result"
    assert from_numpy <= NUMPY_ULPS[name], f"{name}: {from_numpy} ulp from numpy"
    # overflow to inf and underflow to 0 where the exact result rounds there
    big, tiny = np.abs(exact) >= 2.0**128 * (1 - 2.0**-25), np.abs(exact) <= 2.0**-150
    assert np.isinf(got[big]).all() and (got[tiny] == 0).all(), name
    assert_specials_match(got, numpy_f32, x, name, exact)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_f32_edge_cases_are_numpys(name: str) -> None:
    got = run(name, EDGES)
    want = quiet(lambda: FUNCTIONS[name](EDGES))
    exact = quiet(lambda: FUNCTIONS[name](EDGES.astype(np.float64)))
    assert_specials_match(got, want, EDGES, name, exact)
    assert ulp_error(got, exact).max() <= EXACT_ULPS[name], name


def test_exact_cases() -> None:
    """exp2 of an integer and log2 of a power of two are exact, subnormals included."""
    n = np.arange(-149, 128).astype(np.float32)
    powers = np.ldexp(np.float32(1.0), np.arange(-149, 128)).astype(np.float32)
    np.testing.assert_array_equal(run("exp2", n), powers)
    np.testing.assert_array_equal(run("log2", powers), n)
    assert run("log2", np.array([0.0, -0.0, -1e-45, -np.inf], np.float32)).tolist()[:2] == [
        -np.inf, -np.inf]
    assert np.isnan(run("log2", np.array([-1e-45, -np.inf], np.float32))).all()
    assert np.isnan(run("sin", np.array([np.inf, -np.inf, np.nan], np.float32))).all()
    zeros = np.array([0.0, -0.0], np.float32)
    for name in ("sin", "exp2", "exp", "log2", "log", "cos"):
        np.testing.assert_array_equal(np.signbit(run(name, zeros)),
                                      np.signbit(quiet(lambda n=name: FUNCTIONS[n](zeros))))


def test_sin_cos_of_huge_arguments() -> None:
    """Above 2^50 the exact (Payne-Hanek) reduction takes over: still about 0.5 ulp."""
    rng = np.random.default_rng(0)
    x = np.ldexp(rng.uniform(1, 2, 200_000), rng.integers(45, 128, 200_000)).astype(np.float32)
    x = np.concatenate([x, -x, np.float32([3.4028235e38, 2.0**50, np.nextafter(2.0**50, 0)])])
    for name in ("sin", "cos"):
        got = run(name, x)
        assert np.isfinite(got).all() and (np.abs(got) <= 1).all()
        error = ulp_error(got, FUNCTIONS[name](x.astype(np.float64))).max()
        assert error <= EXACT_ULPS[name], f"{name}: {error} ulp"


# --------------------------------------------------------------------------- f16, bf16


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), BF16], ids=["f16", "bf16"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_half_types_over_every_bit_pattern(name: str, dtype: np.dtype) -> None:
    """Computed in f32 and rounded once more: within 1 ulp of numpy's f32 result
    rounded to the type (numpy's half ufuncs compute in f32 too)."""
    x = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(dtype)
    got = run(name, x)
    want = quiet(lambda: FUNCTIONS[name](x.astype(np.float32)).astype(dtype))
    assert_specials_match(got, want, x, f"{name} {dtype}")
    bits = 11 if dtype == np.float16 else 8
    low = -14 if dtype == np.float16 else -126
    in_range = np.isfinite(want.astype(np.float64))
    error = ulp_error(got[in_range], want[in_range], bits, low).max()
    assert error <= 1, f"{name} on {dtype}: {error} ulp from numpy"


# --------------------------------------------------------------------------- f64

F64_FUNCTIONS = ("exp2", "exp", "log2", "log")
# Largest error from the exact result on the inputs below: exp2 0.88, exp 0.87,
# log2 0.69, log 0.64 (numpy's own: 0.76, 0.70, 0.52, 0.61).
F64_ULPS = {"exp2": 0.9, "exp": 0.9, "log2": 0.7, "log": 0.7}
LONG_DOUBLE = np.finfo(np.longdouble).nmant >= 63  # x87 extended: 11 bits to spare


def f64_inputs(name: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    n = 300_000
    if name.startswith("exp"):
        low, high = (-1080, 1030) if name == "exp2" else (-750, 712)
        parts = [rng.uniform(low, high, n), rng.uniform(-1, 1, n),
                 rng.uniform(low, low + 60, n // 4)]  # subnormal results
    else:
        parts = [rng.integers(0, 0x7FF0000000000000, n, dtype=np.int64).view(np.float64),
                 rng.uniform(0.5, 2, n), 1 + rng.uniform(-1e-6, 1e-6, n // 4)]
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.0, -1.0, 2.0, 1024.0,
             1023.999, -1074.0, -1074.5, -1075.0, -1075.001, 709.78, 709.79, -745.13,
             -745.14, 1.7976931348623157e308, 2.2250738585072014e-308]
    return np.concatenate([*parts, np.array(edges)])


@pytest.mark.skipif(not LONG_DOUBLE, reason="no extended-precision long double for a reference")
@pytest.mark.parametrize("name", F64_FUNCTIONS)
def test_f64_exp_and_log(name: str) -> None:
    """exp2 exp log2 log on f64 are vector math too: under 1 ulp from the exact result
    (long double), specials as numpy."""
    x = f64_inputs(name)
    got = run(name, x)
    exact = quiet(lambda: FUNCTIONS[name](x.astype(np.longdouble)))
    ok = np.isfinite(got) & np.isfinite(exact) & (np.abs(exact) <= np.finfo(np.float64).max)
    _, exponent = np.frexp(np.abs(exact[ok]).astype(np.float64))
    ulp = np.ldexp(1.0, np.maximum(exponent - 1, -1022) - 52)
    error = (np.abs(got[ok].astype(np.longdouble) - exact[ok]) / ulp).astype(np.float64)
    assert error.max() <= F64_ULPS[name], f"{name} on f64: {error.max()} ulp"
    rounded = quiet(lambda: exact.astype(np.float64))
    assert_specials_match(got, quiet(lambda: FUNCTIONS[name](x)), x, name, rounded)


# --------------------------------------------------------------------------- frontend


@pytest.mark.parametrize("name", ["exp2", "log2", "sin"])
def test_through_the_tensor_frontend(name: str) -> None:
    """The frontend keeps exp2, log2 and sin as they are: same bounds, same results."""
    x = sweep()[::16]
    got = getattr(Tensor(x, device="llvm"), name)().numpy()
    exact = quiet(lambda: FUNCTIONS[name](x.astype(np.float64)))
    assert ulp_error(got, exact).max() <= EXACT_ULPS[name]
    assert_specials_match(got, quiet(lambda: FUNCTIONS[name](x)), x, name, exact)


@pytest.mark.parametrize("name", ["exp", "log", "cos", "tanh", "sigmoid"])
def test_decomposed_functions_through_the_frontend(name: str) -> None:
    """exp, log, cos, tanh and sigmoid are decomposed into exp2/log2/sin before the
    lowering: numpy's results within the project's f32 tolerance on ordinary inputs."""
    rng = np.random.default_rng(1)
    x = rng.uniform(0.01 if name == "log" else -10, 10, 100_000).astype(np.float32)
    got = getattr(Tensor(x, device="llvm"), name)().numpy()
    reference = {"tanh": np.tanh, "sigmoid": lambda v: 1 / (1 + np.exp(-v))}
    want = reference.get(name, FUNCTIONS.get(name))(x.astype(np.float64))  # type: ignore[misc]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_exp_kernel_is_vectorized_without_libm_calls() -> None:
    """The elementwise chain with exp compiles to one loop of vector arithmetic: no
    call to exp2f/expf (or any call), 512-bit registers where AVX-512 exists."""
    a, b, c = (Tensor(np.ones(4096, np.float32), device="llvm") for _ in range(3))
    kernels = realize.schedule([(((a * b + c).exp() * 0.5 - a).relu())._value])
    assert len(kernels) == 1
    jit = llvm_device.compile_kernel(kernels[0]).jit
    assert not re.search(r"exp2f|expf|llvm\.exp", jit.optimized_ir)
    asm = llvm_jit.assembly(jit)
    assert not re.search(r"\bcall", asm), "a call in the exp kernel"
    if llvm_jit.host_target().has("avx512f"):
        assert re.search(r"vfmadd\w+\s+.*zmm", asm), "no 512-bit FMA in the exp kernel"


def test_f32_and_f64_intrinsics_in_one_kernel() -> None:
    """One kernel may use the same LLVM intrinsic on f32 and f64 (xDSL exports the llvm
    dialect's intrinsic ops unmangled, so f64 goes by its mangled name)."""
    ops = ["sqrt", "absf", "floor", "ceil", "exp2", "log2", "sin", "cos", "rsqrt", "powf",
           "copysign"]
    n = 64
    x = np.linspace(0.25, 4.0, n).astype(np.float32)
    body = []
    for k, op in enumerate(ops):
        operands = "%a, %a" if op in ("powf", "copysign") else "%a"
        wide = operands.replace("%a", "%d")
        body += [f"%s{k} = math.{op} {operands} : f32", f"%w{k} = math.{op} {wide} : f64",
                 f"%n{k} = arith.truncf %w{k} : f64 to f32",
                 f"%t{k} = arith.subf %s{k}, %n{k} : f32",
                 f"%acc{k + 1} = arith.addf %acc{k}, %t{k} : f32"]
    lines = "\n".join(body)
    text = f"""func.func @k(%x: memref<{n}xf32>, %o: memref<{n}xf32>, %start: index,
                            %stop: index) attributes {{irtensor.kernel}} {{
      %c1 = arith.constant 1 : index
      %acc0 = arith.constant 0.0 : f32
      scf.for %i = %start to %stop step %c1 {{
        %a = memref.load %x[%i] : memref<{n}xf32>
        %d = arith.extf %a : f32 to f64
        {lines}
        memref.store %acc{len(ops)}, %o[%i] : memref<{n}xf32>
      }}
      func.return
    }}"""
    out = np.empty_like(x)
    llvm_jit.compile_module(parse(text)).function("k")(x, out, 0, n)
    assert np.abs(out).max() < 1e-5  # f32 and f64 results agree
