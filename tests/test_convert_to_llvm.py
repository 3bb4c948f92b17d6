"""convert-to-llvm: hand-written loop-level kernels, lowered, JIT-compiled, called on numpy.

Every kernel here is written in the contract `lower-kernels-to-loops` produces
(`func.func` marked `irtensor.kernel`, memrefs, then `%start, %stop`). Results
are compared with numpy: exactly (bit for bit, NaN and the sign of zero
included) for arithmetic, comparisons, casts and max/min; within 1-2 ulp for
the transcendental functions, which come from libm as numpy's do.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from xdsl.dialects import llvm

from irtensor import dtypes
from irtensor.ir import parse
from irtensor.passes.llvm import jit as llvm_jit
from irtensor.passes.llvm.convert_to_llvm import LLVMLoweringError, convert_to_llvm
from irtensor.pipeline import Pipeline, PipelineError

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {
    "f16": np.dtype(np.float16), "bf16": BF16, "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
    "i1": np.dtype(np.bool_), "i16": np.dtype(np.int16), "index": np.dtype(np.int64),
}
FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i32", "i64"]

# --------------------------------------------------------------------------- helpers


def kernel(exprs: Sequence[tuple[str, str]], inputs: Sequence[str], n: int) -> str:
    """A kernel @k(%x0.., %o0.., %start, %stop): at each i it loads %a, %b, %c (from
    %x0, %x1, %x2), computes each expression (`{r}` names its result) and stores
    the k-th result into %ok."""
    letters = "abc"
    args = [f"%x{i}: memref<{n}x{t}>" for i, t in enumerate(inputs)]
    args += [f"%o{k}: memref<{n}x{t}>" for k, (_, t) in enumerate(exprs)]
    body = [f"%{letters[i]} = memref.load %x{i}[%i] : memref<{n}x{t}>"
            for i, t in enumerate(inputs)]
    for k, (expr, t) in enumerate(exprs):
        body += expr.format(r=f"%r{k}").splitlines()
        body.append(f"memref.store %r{k}, %o{k}[%i] : memref<{n}x{t}>")
    lines = "\n".join(f"    {line.strip()}" for line in body)
    return (f"func.func @k({', '.join(args)}, %start: index, %stop: index) "
            f"attributes {{irtensor.kernel}} {{\n  %c1 = arith.constant 1 : index\n"
            f"  scf.for %i = %start to %stop step %c1 {{\n{lines}\n  }}\n  func.return\n}}\n")


@functools.cache
def compiled(text: str) -> llvm_jit.JitModule:
    return llvm_jit.compile_module(parse(text))


def ir_name(dtype: np.dtype) -> str:
    return next(k for k, v in DTYPES.items() if v == dtype)


def run(exprs: Sequence[tuple[str, str]], *inputs: np.ndarray) -> list[np.ndarray]:
    n = len(inputs[0])
    text = kernel(exprs, [ir_name(a.dtype) for a in inputs], n)
    outs = [np.zeros(n, DTYPES[t]) for _, t in exprs]
    compiled(text).function("k")(*inputs, *outs, 0, n)
    return outs


def assert_same(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """Equal dtype and values; for floats NaN where NaN, and the same sign of zero."""
    assert got.dtype == want.dtype, what
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
        g, w = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(w)
    np.testing.assert_array_equal(np.isnan(g), nan, err_msg=f"{what}: NaN positions")
    np.testing.assert_array_equal(g[~nan], w[~nan], err_msg=what)
    np.testing.assert_array_equal(np.signbit(g[~nan]), np.signbit(w[~nan]),
                                  err_msg=f"{what}: sign")


def specials(dtype: np.dtype) -> np.ndarray:
    """Zeros of both signs, infinities, NaN, extremes, ties and ordinary values."""
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([0, 1, -1, 2, -2, 3, 7, -7, 16, info.min, info.max, info.min + 1,
                         info.max - 1, 12345, -9999], dtype)
    info = ml_dtypes.finfo(dtype) if dtype == BF16 else np.finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 1 / 3, 100.0, -7.25, math.inf,
              -math.inf, math.nan, float(info.max), -float(info.max), float(info.tiny),
              float(info.smallest_subnormal)]
    return np.array(values, np.float64).astype(dtype)


def pairs(dtype: np.dtype, extra: int = 64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of special values, then random ones."""
    s = specials(dtype)
    a, b = (np.array(v, dtype) for v in zip(*itertools.product(s, s), strict=True))
    rng = np.random.default_rng(seed)
    if dtype.kind in "iu":
        ra, rb = (rng.integers(-1000, 1000, extra).astype(dtype) for _ in range(2))
    elif dtype.kind == "b":
        ra, rb = (rng.random(extra) < 0.5 for _ in range(2))
    else:
        ra, rb = (rng.uniform(-10, 10, extra).astype(dtype) for _ in range(2))
    return np.concatenate([a, ra]), np.concatenate([b, rb])


def numpy_quiet(fn: Callable[[], np.ndarray]) -> np.ndarray:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# --------------------------------------------------------------------------- floats

FLOAT_BINARY = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
    "maximumf": np.maximum, "minimumf": np.minimum,
}


@pytest.mark.parametrize("t", FLOATS)
def test_float_arithmetic_is_numpys(t: str) -> None:
    dtype = DTYPES[t]
    a, b = pairs(dtype)
    exprs = [(f"{{r}} = arith.{name} %a, %b : {t}", t) for name in FLOAT_BINARY]
    exprs.append((f"{{r}} = arith.negf %a : {t}", t))
    got = run(exprs, a, b)
    wants = [numpy_quiet(lambda f=f: f(a, b)) for f in FLOAT_BINARY.values()] + [-a]
    for name, g, w in zip([*FLOAT_BINARY, "negf"], got, wants, strict=True):
        assert_same(g, w, f"{name} {t}")


CMPF = {
    "false": lambda a, b: np.zeros(a.shape, bool),
    "oeq": lambda a, b: a == b, "ogt": lambda a, b: a > b, "oge": lambda a, b: a >= b,
    "olt": lambda a, b: a < b, "ole": lambda a, b: a <= b,
    "one": lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),
    "ord": lambda a, b: ~np.isnan(a) & ~np.isnan(b),
    "ueq": lambda a, b: (a == b) | np.isnan(a) | np.isnan(b),
    "ugt": lambda a, b: ~(a <= b), "uge": lambda a, b: ~(a < b),
    "ult": lambda a, b: ~(a >= b), "ule": lambda a, b: ~(a > b), "une": lambda a, b: a != b,
    "uno": lambda a, b: np.isnan(a) | np.isnan(b),
    "true": lambda a, b: np.ones(a.shape, bool),
}


@pytest.mark.parametrize("t", FLOATS)
def test_cmpf_every_predicate(t: str) -> None:
    a, b = pairs(DTYPES[t])
    got = run([(f"{{r}} = arith.cmpf {p}, %a, %b : {t}", "i1") for p in CMPF], a, b)
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    for (p, ref), g in zip(CMPF.items(), got, strict=True):
        assert_same(g, ref(wide_a, wide_b), f"cmpf {p} {t}")


def test_select_and_maxnum() -> None:
    a, b = pairs(DTYPES["f32"])
    c = a > b
    got = run([("{r} = arith.select %c, %a, %b : f32", "f32"),
               ("{r} = arith.maxnumf %a, %b : f32", "f32"),
               ("{r} = arith.minnumf %a, %b : f32", "f32")], a, b, c)
    assert_same(got[0], np.where(c, a, b))
    assert_same(got[1][~(a == b)], np.fmax(a, b)[~(a == b)])
    assert_same(got[2][~(a == b)], np.fmin(a, b)[~(a == b)])


# --------------------------------------------------------------------------- integers


def _trunc_div(x: int, y: int, bits: int) -> int:
    if y == 0:
        return 0
    q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
    return (q + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


def _ceil_div(x: int, y: int, bits: int) -> int:
    if y == 0:
        return 0
    return (-(-x // y) + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


def int_refs(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    bits = a.dtype.itemsize * 8
    u = np.dtype(f"uint{bits}")
    au, bu = a.view(u), b.view(u)

    def elementwise(f: Callable[[int, int, int], int]) -> np.ndarray:
        return np.array([f(int(x), int(y), bits) for x, y in zip(a, b, strict=True)], a.dtype)

    return numpy_quiet(lambda: {
        "addi": a + b, "subi": a - b, "muli": a * b,
        "floordivsi": a // b, "remsi": np.fmod(a, b),
        "divsi": elementwise(_trunc_div), "ceildivsi": elementwise(_ceil_div),
        "maxsi": np.maximum(a, b), "minsi": np.minimum(a, b),
        "maxui": np.maximum(au, bu).view(a.dtype), "minui": np.minimum(au, bu).view(a.dtype),
        "divui": np.where(bu == 0, 0, au // np.where(bu == 0, 1, bu)).astype(u).view(a.dtype),
        "remui": np.where(bu == 0, 0, au % np.where(bu == 0, 1, bu)).astype(u).view(a.dtype),
        "andi": a & b, "ori": a | b, "xori": a ^ b,
        "shli": np.left_shift(a, b), "shrsi": np.right_shift(a, b),
        "shrui": np.right_shift(au, bu).view(a.dtype),
    })


@pytest.mark.parametrize("t", INTS)
def test_integer_arithmetic_is_numpys(t: str) -> None:
    a, b = pairs(DTYPES[t])
    refs = int_refs(a, b)
    got = run([(f"{{r}} = arith.{name} %a, %b : {t}", t) for name in refs], a, b)
    for (name, want), g in zip(refs.items(), got, strict=True):
        assert_same(g, want, f"{name} {t}")



@pytest.mark.parametrize("t", INTS)
def test_signed_division_by_a_positive_constant_is_numpys(t: str) -> None:
    """A known positive divisor (an index's `floordiv 16`) takes a short form without the
    zero and -1 guards: the same floor, ceiling, truncation and remainder on negative,
    positive and extreme dividends."""
    a, _ = pairs(DTYPES[t])
    for divisor in (1, 3, 16, int(np.iinfo(DTYPES[t]).max)):
        b = np.full_like(a, divisor)
        refs = {name: want for name, want in int_refs(a, b).items()
                if name in ("floordivsi", "remsi", "divsi", "ceildivsi")}
        got = run([(f"{{r}}_d = arith.constant {divisor} : {t}\n"
                    f"{{r}} = arith.{name} %a, {{r}}_d : {t}", t) for name in refs], a)
        for (name, want), g in zip(refs.items(), got, strict=True):
            assert_same(g, want, f"{name} {t} by {divisor}")

CMPI = {
    "eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
    "sgt": np.greater, "sge": np.greater_equal,
}


@pytest.mark.parametrize("t", [*INTS, "i1"])
def test_cmpi_every_predicate(t: str) -> None:
    a, b = pairs(DTYPES[t])
    bits = 1 if t == "i1" else DTYPES[t].itemsize * 8
    # signless i1: true is -1 when signed, 1 when unsigned
    sa, sb = (-x.astype(np.int64) if t == "i1" else x for x in (a, b))
    ua, ub = (x.astype(np.uint8) if t == "i1" else x.view(f"uint{bits}") for x in (a, b))
    preds = {**{p: f(sa, sb) for p, f in CMPI.items()},
             "ult": ua < ub, "ule": ua <= ub, "ugt": ua > ub, "uge": ua >= ub}
    got = run([(f"{{r}} = arith.cmpi {p}, %a, %b : {t}", "i1") for p in preds], a, b)
    for (p, want), g in zip(preds.items(), got, strict=True):
        assert_same(g, want, f"cmpi {p} {t}")


def test_bool_logic_and_memory() -> None:
    a, b = pairs(DTYPES["i1"])
    got = run([("{r} = arith.andi %a, %b : i1", "i1"), ("{r} = arith.ori %a, %b : i1", "i1"),
               ("{r} = arith.xori %a, %b : i1", "i1"), ("{r} = arith.maxui %a, %b : i1", "i1"),
               ("{r} = arith.select %a, %b, %a : i1", "i1")], a, b)
    for g, w in zip(got, [a & b, a | b, a ^ b, a | b, np.where(a, b, a)], strict=True):
        assert_same(g, w)
        assert set(np.unique(g.view(np.uint8))) <= {0, 1}  # stored as numpy bools


# --------------------------------------------------------------------------- casts


def cast_cases() -> list[tuple[str, str, str]]:
    """(op, source, result) for every cast the lowering knows."""
    widen = [("f16", "f32"), ("f16", "f64"), ("f32", "f64"), ("bf16", "f32"), ("bf16", "f64")]
    cases = [("extf", s, d) for s, d in widen] + [("truncf", d, s) for s, d in widen]
    cases += [("truncf", "f64", "bf16"), ("truncf", "f32", "bf16")]
    for f in FLOATS:
        cases += [("sitofp", i, f) for i in [*INTS, "i1"]] + [("uitofp", i, f) for i in
                                                              [*INTS, "i1"]]
        cases += [("fptosi", f, i) for i in INTS]
    cases += [("extsi", "i32", "i64"), ("extui", "i32", "i64"), ("extui", "i1", "i32"),
              ("extsi", "i1", "i64"), ("trunci", "i64", "i32"), ("trunci", "i32", "i1")]
    return cases


def cast_reference(op: str, x: np.ndarray, result: np.dtype) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    if op == "uitofp":
        x = x.astype(np.uint8) if x.dtype == bool else x.view(f"uint{bits}")
    elif op == "sitofp" and x.dtype == bool:  # signless i1: true is -1
        x = -x.astype(np.int64)
    elif op == "extui":
        x = x.astype(np.uint8) if x.dtype == bool else x.view(f"uint{bits}")
    elif op == "extsi" and x.dtype == bool:
        x = -x.astype(np.int64)
    elif op == "trunci" and result.kind == "b":
        return (x & 1).astype(bool)
    elif op == "fptosi" and x.dtype == DTYPES["bf16"]:  # as f16 and f32 do (INT_MIN)
        x = x.astype(np.float32)
    return numpy_quiet(lambda: dtypes.cast_array(x, result))


def cast_inputs(dtype: np.dtype) -> np.ndarray:
    rng = np.random.default_rng(1)
    if dtype.kind in "iub":
        wide = np.array([2**24 + 2**16 + 1, 2**31 - 1, 65519, 65520, 2**53 + 3, -(2**40) - 7,
                         2**63 - 1, -(2**63)], np.int64)
        return np.concatenate([specials(dtype), wide.astype(dtype),
                               rng.integers(-(2**40), 2**40, 200).astype(dtype)])
    bits = rng.integers(0, 2 ** (dtype.itemsize * 8), 300, dtype=np.uint64)
    from_bits = bits.astype(f"uint{dtype.itemsize * 8}").view(dtype)
    if dtype == np.float32:  # bf16 ties to even (down and up), the overflow to inf, NaNs
        ties = np.array([0x3F808000, 0x3F818000, 0xBF808000, 0x7F7FFFFF, 0x7F7F8000,
                         0x7F800001, 0xFF812345, 0x00008000, 0x00018000], np.uint32)
        from_bits = np.concatenate([from_bits, ties.view(np.float32)])
    odd = np.array([1 + 2**-11 + 2**-40, 2**-25 + 2**-60, 65519.99, 65520.0, 1 + 2**-8 + 2**-30,
                    3e9, -3e9, 1e19, 2.5, -2.5, 2**31, -(2**31), 2**63], np.float64)
    return np.concatenate([specials(dtype), from_bits, numpy_quiet(lambda: odd.astype(dtype))])


@pytest.mark.parametrize(("op", "source", "result"), cast_cases(),
                         ids=[f"{o}-{s}-{r}" for o, s, r in cast_cases()])
def test_casts_are_numpys(op: str, source: str, result: str) -> None:
    x = cast_inputs(DTYPES[source])
    (got,) = run([(f"{{r}} = arith.{op} %a : {source} to {result}", result)], x)
    assert_same(got, cast_reference(op, x, DTYPES[result]), f"{op} {source} -> {result}")


def test_index_casts_and_bitcasts() -> None:
    x = specials(DTYPES["i32"])
    y = specials(DTYPES["i64"])
    f = specials(DTYPES["f32"])
    h = specials(BF16)
    got = run([("{r}_i = arith.index_cast %a : i32 to index\n"
                "{r} = arith.index_cast {r}_i : index to i64", "i64"),
               ("{r} = arith.index_cast %b : i64 to i32", "i32"),
               ("{r} = arith.bitcast %c : f32 to i32", "i32"),
               ("{r} = arith.bitcast %c : f32 to i32", "i32")],
              np.resize(x, 18), np.resize(y, 18), np.resize(f, 18))
    assert_same(got[0], np.resize(x, 18).astype(np.int64))
    assert_same(got[1], np.resize(y, 18).astype(np.int32))
    assert_same(got[2], np.resize(f, 18).view(np.int32))
    (bits, back) = run([("{r} = arith.bitcast %a : bf16 to i16", "i16"),
                        ("{r}_b = arith.bitcast %a : bf16 to i16\n"
                         "{r} = arith.bitcast {r}_b : i16 to bf16", "bf16")], h)
    assert_same(bits, h.view(np.int16))
    assert_same(back, h)


CONSTANTS = [
    ("7 : i32", "i32", 7), ("-2147483648 : i32", "i32", -(2**31)),
    ("-9223372036854775808 : i64", "i64", -(2**63)), ("true", "i1", True), ("false", "i1", False),
    ("0.1 : f16", "f16", 0.1), ("0.1 : bf16", "bf16", 0.1), ("0.1 : f32", "f32", 0.1),
    ("0.1 : f64", "f64", 0.1), ("-0.0 : f32", "f32", -0.0), ("0x7F800000 : f32", "f32", math.inf),
    ("0xFF800000 : f32", "f32", -math.inf), ("0x7FC00000 : f32", "f32", math.nan),
    ("0x7E00 : f16", "f16", math.nan), ("65504.0 : f16", "f16", 65504.0),
    ("3.0e38 : bf16", "bf16", 3.0e38),
]


def test_constants_of_every_type() -> None:
    exprs = [(f"{{r}} = arith.constant {text}", t) for text, t, _ in CONSTANTS]
    exprs.append(("{r}_i = arith.constant 5 : index\n"
                  "{r} = arith.index_cast {r}_i : index to i64", "i64"))
    got = run(exprs, np.zeros(2, np.float32))
    wants = [np.full(2, v, DTYPES[t]) for _, t, v in CONSTANTS] + [np.full(2, 5, np.int64)]
    for (text, _, _), g, w in zip(CONSTANTS, got, wants, strict=False):
        assert_same(g, w, text)
    assert_same(got[-1], wants[-1])


# --------------------------------------------------------------------------- math

MATH = {"exp2": np.exp2, "log2": np.log2, "sqrt": np.sqrt, "sin": np.sin, "exp": np.exp,
        "log": np.log}


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    g, w = got.astype(np.float64), want.astype(np.float64)
    finite = np.isfinite(w) & np.isfinite(g)
    with np.errstate(invalid="ignore"):
        spacing = np.abs(np.spacing(want.astype(np.float32) if want.dtype == BF16 else want))
    # a bf16 has 8 significant bits to an f32's 24
    spacing = spacing.astype(np.float64) * (2**16 if want.dtype == BF16 else 1)
    dist = np.zeros(g.shape)
    dist[finite] = np.abs(g[finite] - w[finite]) / spacing[finite]
    return dist


@pytest.mark.parametrize("t", FLOATS)
def test_math_within_ulps(t: str) -> None:
    dtype = DTYPES[t]
    rng = np.random.default_rng(2)
    x = np.concatenate([specials(dtype), rng.uniform(-20, 20, 300).astype(dtype),
                        rng.uniform(0, 3, 100).astype(dtype)])
    got = run([(f"{{r}} = math.{name} %a : {t}", t) for name in MATH], x)
    for (name, f), g in zip(MATH.items(), got, strict=True):
        # numpy's half-precision ufuncs compute in f32 and round, as the kernel does
        wide = x.astype(np.float32) if t in ("f16", "bf16") else x
        want = numpy_quiet(lambda f=f, wide=wide: f(wide).astype(dtype))
        nonfinite = ~np.isfinite(want.astype(np.float64))
        assert_same(g[nonfinite], want[nonfinite], f"{name} {t} at inf/NaN")
        limit = 0 if name == "sqrt" else (1 if t in ("f16", "bf16") else 2)
        worst = ulp_distance(g, want).max()
        assert worst <= limit, f"math.{name} on {t}: {worst} ulp from numpy"


def test_more_math() -> None:
    x = np.linspace(-3, 3, 61).astype(np.float32)
    got = run([("{r} = math.absf %a : f32", "f32"), ("{r} = math.floor %a : f32", "f32"),
               ("{r} = math.ceil %a : f32", "f32"), ("{r} = math.tanh %a : f32", "f32"),
               ("{r} = math.roundeven %a : f32", "f32"), ("{r} = math.trunc %a : f32", "f32"),
               ("{r} = math.cos %a : f32", "f32"),
               ("{r} = math.powf %a, %a : f32", "f32"),
               ("{r} = math.fma %a, %a, %a : f32", "f32")], x)
    exact = [np.abs(x), np.floor(x), np.ceil(x)]
    for g, w in zip(got[:3], exact, strict=True):
        assert_same(g, w)
    np.testing.assert_allclose(got[3], np.tanh(x), rtol=2e-7, atol=1e-7)
    assert_same(got[4], np.round(x))
    assert_same(got[5], np.trunc(x))
    np.testing.assert_allclose(got[6], np.cos(x), rtol=2e-7, atol=1e-7)
    np.testing.assert_allclose(got[7], numpy_quiet(lambda: x**x), rtol=1e-6)
    np.testing.assert_allclose(got[8], (x.astype(np.float64) ** 2 + x).astype(np.float32))


# --------------------------------------------------------------------------- structure

FULL = "attributes {irtensor.kernel}"


def compile_and_call(text: str, *arrays: np.ndarray, name: str = "k", start: int = 0,
                     stop: int | None = None, **lowering: object) -> None:
    module = parse(text)
    if lowering:
        convert_to_llvm(module, **lowering)  # type: ignore[arg-type]
    fn = llvm_jit.compile_module(module).function(name)
    fn(*arrays, start, len(arrays[0]) if stop is None else stop)


def test_rank0_memrefs() -> None:
    text = f"""func.func @k(%x: memref<f64>, %y: memref<bf16>, %o: memref<f64>, %p: memref<bf16>,
                            %start: index, %stop: index) {FULL} {{
      %a = memref.load %x[] : memref<f64>
      %b = memref.load %y[] : memref<bf16>
      %s = arith.addf %a, %a : f64
      %t = arith.mulf %b, %b : bf16
      memref.store %s, %o[] : memref<f64>
      memref.store %t, %p[] : memref<bf16>
      func.return
    }}"""
    x, y = np.array(1.25), np.array(3.3, BF16)
    o, p = np.zeros(()), np.zeros((), BF16)
    llvm_jit.compile_module(parse(text)).function("k")(x, y, o, p, 0, 1)
    assert o == 2.5 and p == y * y


def test_zero_size_loops_and_buffers() -> None:
    text = kernel([("{r} = arith.addf %a, %a : f32", "f32")], ["f32"], 8)
    fn = compiled(text).function("k")
    x, out = np.ones(8, np.float32), np.full(8, 7.0, np.float32)
    fn(x, out, 3, 3)  # an empty range: nothing happens
    fn(x, out, 5, 2)  # start > stop: nothing happens
    assert (out == 7).all()
    empty = kernel([("{r} = arith.addf %a, %a : f32", "f32")], ["f32"], 0)
    compiled(empty).function("k")(np.ones(0, np.float32), np.ones(0, np.float32), 0, 0)


def test_masked_load_with_clamped_index() -> None:
    """out[i] = x[i - 2] where 0 <= i - 2, else the pad 0.5 (the read clamped in bounds)."""
    text = f"""func.func @k(%x: memref<10xf32>, %out: memref<10xf32>, %start: index,
                            %stop: index) {FULL} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %pad = arith.constant 0.5 : f32
      scf.for %i = %start to %stop step %c1 {{
        %j = arith.subi %i, %c2 : index
        %valid = arith.cmpi sge, %j, %c0 : index
        %below = arith.cmpi slt, %j, %c0 : index
        %clamped = arith.select %below, %c0, %j : index
        %v = memref.load %x[%clamped] : memref<10xf32>
        %r = arith.select %valid, %v, %pad : f32
        memref.store %r, %out[%i] : memref<10xf32>
      }}
      func.return
    }}"""
    x, out = np.arange(10, dtype=np.float32), np.zeros(10, np.float32)
    compile_and_call(text, x, out)
    assert_same(out, np.concatenate([[0.5, 0.5], x[:8]]).astype(np.float32))


def matmul_text(m: int, k: int, n: int, t: str = "f32") -> str:
    return f"""func.func @matmul(%a: memref<{m}x{k}x{t}>, %b: memref<{k}x{n}x{t}>,
                          %out: memref<{m}x{n}x{t}>, %start: index, %stop: index) {FULL} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cn = arith.constant {n} : index
      %ck = arith.constant {k} : index
      %zero = arith.constant 0.0 : {t}
      scf.for %i = %start to %stop step %c1 {{
        scf.for %j = %c0 to %cn step %c1 {{
          %acc = scf.for %kk = %c0 to %ck step %c1 iter_args(%s = %zero) -> ({t}) {{
            %x = memref.load %a[%i, %kk] : memref<{m}x{k}x{t}>
            %y = memref.load %b[%kk, %j] : memref<{k}x{n}x{t}>
            %p = arith.mulf %x, %y : {t}
            %q = arith.addf %s, %p : {t}
            scf.yield %q : {t}
          }}
          memref.store %acc, %out[%i, %j] : memref<{m}x{n}x{t}>
        }}
      }}
      func.return
    }}"""


@pytest.mark.parametrize("t", ["f32", "bf16"])
def test_reduction_in_iter_args(t: str) -> None:
    """A matmul summing in an iter_arg: exactly numpy's sum taken in the same order."""
    dtype = DTYPES[t]
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((5, 7)).astype(dtype), rng.standard_normal((7, 3)).astype(dtype)
    out = np.zeros((5, 3), dtype)
    compile_and_call(matmul_text(5, 7, 3, t), a, b, out, name="matmul", stop=5)
    want = np.zeros((5, 3), dtype)
    for k in range(7):
        want = (want + a[:, k, None] * b[None, k, :]).astype(dtype)
    assert_same(out, want)


ACCUMULATOR = f"""func.func @k(%x: memref<6x50xf32>, %out: memref<6xf32>, %start: index,
                               %stop: index) {FULL} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c50 = arith.constant 50 : index
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %acc = memref.alloc() : memref<6xf32>
  scf.for %i = %start to %stop step %c1 {{
    memref.store %zero, %acc[%i] : memref<6xf32>
  }}
  scf.for %k = %c0 to %c50 step %c1 {{
    scf.for %i = %start to %stop step %c1 {{
      %s = memref.load %acc[%i] : memref<6xf32>
      %v = memref.load %x[%i, %k] : memref<6x50xf32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %acc[%i] : memref<6xf32>
    }}
  }}
  scf.for %i = %start to %stop step %c1 {{
    %s = memref.load %acc[%i] : memref<6xf32>
    %r = arith.mulf %s, %two : f32
    memref.store %r, %out[%i] : memref<6xf32>
  }}
  memref.dealloc %acc : memref<6xf32>
  func.return
}}"""


@pytest.mark.parametrize("limit", [32768, 0], ids=["alloca", "malloc"])
def test_reduction_through_accumulator_buffer(limit: int) -> None:
    module = parse(ACCUMULATOR)
    convert_to_llvm(module, alloca_limit=limit)
    text = str(module)
    assert ("llvm.alloca" in text) == (limit > 0)
    assert ("llvm.call @malloc" in text and "llvm.call @free" in text) == (limit == 0)
    x = np.random.default_rng(4).standard_normal((6, 50)).astype(np.float32)
    out = np.zeros(6, np.float32)
    llvm_jit.compile_module(module).function("k")(x, out, 1, 5)
    want = np.zeros(6, np.float32)
    for k in range(50):
        want = (want + x[:, k]).astype(np.float32)
    assert_same(out[1:5], want[1:5] * 2)
    assert (out[[0, 5]] == 0).all()


def test_scf_if_with_results() -> None:
    x = np.linspace(-2, 2, 9).astype(np.float32)
    (got,) = run([("{r}_c = arith.constant 0.0 : f32\n"
                   "{r}_p = arith.cmpf ogt, %a, {r}_c : f32\n"
                   "{r} = scf.if {r}_p -> (f32) {{\n"
                   "  scf.yield %a : f32\n}} else {{\n"
                   "  {r}_n = arith.negf %a : f32\n  scf.yield {r}_n : f32\n}}", "f32")], x)
    assert_same(got, np.where(x > 0, x, -x))


def test_buffer_allocated_inside_a_loop_is_one_stack_slot() -> None:
    """A per-iteration scratch buffer: hoisted to one alloca, the dealloc dropped."""
    text = f"""func.func @k(%x: memref<8x4xf32>, %out: memref<8xf32>, %start: index,
                            %stop: index) {FULL} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      scf.for %i = %start to %stop step %c1 {{
        %tmp = memref.alloc() : memref<4xf32>
        scf.for %j = %c0 to %c4 step %c1 {{
          %v = memref.load %x[%i, %j] : memref<8x4xf32>
          %w = arith.mulf %v, %v : f32
          memref.store %w, %tmp[%j] : memref<4xf32>
        }}
        %sum = scf.for %j = %c0 to %c4 step %c1 iter_args(%s = %c0) -> (index) {{
          %n = arith.addi %s, %c1 : index
          scf.yield %n : index
        }}
        %last = arith.subi %sum, %c1 : index
        %r = memref.load %tmp[%last] : memref<4xf32>
        memref.store %r, %out[%i] : memref<8xf32>
        memref.dealloc %tmp : memref<4xf32>
      }}
      func.return
    }}"""
    module = parse(text)
    convert_to_llvm(module)
    lowered = str(module)
    assert lowered.count("llvm.alloca") == 1 and "free" not in lowered
    entry = next(iter(module.ops)).body.blocks[0]
    assert any(isinstance(op, llvm.AllocaOp) for op in entry.ops)
    x, out = np.arange(32, dtype=np.float32).reshape(8, 4), np.zeros(8, np.float32)
    llvm_jit.compile_module(module).function("k")(x, out, 0, 8)
    assert_same(out, x[:, 3] * x[:, 3])


HOST = f"""func.func @double(%x: memref<4xf32>, %out: memref<4xf32>, %start: index,
                            %stop: index) {FULL} {{
  %c1 = arith.constant 1 : index
  scf.for %i = %start to %stop step %c1 {{
    %v = memref.load %x[%i] : memref<4xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %out[%i] : memref<4xf32>
  }}
  func.return
}}
func.func @main(%x: memref<4xf32>, %out: memref<4xf32>) {{
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %buf = memref.alloc() : memref<4xf32>
  func.call @double(%x, %buf, %c0, %c4) : (memref<4xf32>, memref<4xf32>, index, index) -> ()
  func.call @double(%buf, %out, %c0, %c4) : (memref<4xf32>, memref<4xf32>, index, index) -> ()
  memref.dealloc %buf : memref<4xf32>
  func.return
}}"""


def test_kernels_only_erases_the_host_function() -> None:
    module = parse(HOST)
    convert_to_llvm(module)
    assert [op.sym_name.data for op in module.ops] == ["double"]
    assert all(op.name.startswith("llvm.") for op in module.walk() if op is not module)


def test_whole_program_with_calls_and_heap() -> None:
    module = parse(HOST)
    convert_to_llvm(module, kernels_only=False)
    names = [op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp)]
    assert set(names) == {"malloc", "free", "double", "main"}
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    llvm_jit.compile_module(module).function("main")(x, out)
    assert_same(out, x * 4)


def test_pass_through_the_pipeline_with_options() -> None:
    module = parse(matmul_text(2, 3, 4))
    Pipeline("convert-to-llvm{fast-math=true noalias=true}").run(module)
    text = str(module)
    assert "fastmath<contract>" in text and "llvm.noalias" in text
    assert "irtensor.arg_types = [memref<2x3xf32>, memref<3x4xf32>, memref<2x4xf32>" in text


def test_unsupported_ops_are_named() -> None:
    text = f"""func.func @k(%x: memref<4xf32>, %o: memref<4xf32>, %s: index, %e: index) {FULL} {{
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      %a = math.atan %v : f32
      memref.store %a, %o[%c0] : memref<4xf32>
      func.return
    }}"""
    with pytest.raises(LLVMLoweringError, match=r"cannot lower 'math.atan' in @k"):
        convert_to_llvm(parse(text))
    with pytest.raises(PipelineError, match=r"convert-to-llvm.*math\.atan"):
        Pipeline("convert-to-llvm").run(parse(text))
    dynamic = text.replace("memref<4xf32>", "memref<?xf32>").replace(
        "math.atan", "math.sqrt")
    with pytest.raises(LLVMLoweringError, match="static"):
        convert_to_llvm(parse(dynamic))


# --------------------------------------------------------------------------- properties

N_PROPERTY = 24


def _arrays(t: str) -> st.SearchStrategy[np.ndarray]:
    """Arrays of any bit patterns of the type (floats: every NaN, inf and subnormal too)."""
    dtype = DTYPES[t]
    if t in FLOATS:
        bits = np.dtype(f"uint{dtype.itemsize * 8}")
        return hnp.arrays(bits, N_PROPERTY).map(lambda a: a.view(dtype))
    return hnp.arrays(dtype, N_PROPERTY)


def _property_ops(t: str) -> list[tuple[str, Callable[..., np.ndarray]]]:
    if t in FLOATS:
        return [(name, f) for name, f in FLOAT_BINARY.items()]
    if t == "i1":
        return [("andi", np.bitwise_and), ("ori", np.bitwise_or), ("xori", np.bitwise_xor)]
    return [(name, lambda a, b, name=name: int_refs(a, b)[name])
            for name in ("addi", "subi", "muli", "floordivsi", "remsi", "maxsi", "minsi")]


@pytest.mark.parametrize("t", [*FLOATS, *INTS, "i1"])
def test_elementwise_arithmetic_property(t: str) -> None:
    ops = _property_ops(t)

    @settings(max_examples=25, deadline=None)
    @given(a=_arrays(t), b=_arrays(t))
    def check(a: np.ndarray, b: np.ndarray) -> None:
        got = run([(f"{{r}} = arith.{name} %a, %b : {t}", t) for name, _ in ops], a, b)
        for (name, f), g in zip(ops, got, strict=True):
            assert_same(g, numpy_quiet(lambda f=f: f(a, b)), f"{name} {t}")

    check()


def test_ops_made_like_a_first_one_equal_their_constructors() -> None:
    """`made_like` builds an op by its constructor once per key, then by `create` from
    what that made: the second and later ops print as the constructor's would."""
    from xdsl.dialects import llvm
    from xdsl.dialects.builtin import f32, i64
    from xdsl.ir import Block

    from irtensor.ir import to_text
    from irtensor.passes.llvm.lowering import made_like

    block = Block(arg_types=[llvm.LLVMPointerType(), i64, i64])
    pointer, x, y = block.args
    pointee = llvm.LLVMArrayType(4, llvm.LLVMArrayType(8, f32))
    for build in (
        lambda a, b: llvm.GEPOp.from_mixed_indices(pointer, [a, 3, b], pointee, inbounds=True),
        lambda a, b: llvm.AddOp(a, b),
        lambda a, b: llvm.StoreOp(a, pointer, alignment=8, nontemporal=True),
    ):
        key = ("test", id(build))
        first = made_like(key, list(build(x, y).operands), lambda f=build: f(x, y))
        again = made_like(key, list(build(y, x).operands), lambda f=build: f(y, x))
        for op in (first, again):
            block.add_op(op)
        assert to_text(again) == to_text(build(y, x)), to_text(again)
        assert again is not first and type(again) is type(first)
        again.verify()


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["floordivsi", "ceildivsi", "divsi", "remsi"]),
       t=st.sampled_from(INTS), divisor=st.integers(1, 2**31 - 1), seed=st.integers(0, 2**16))
def test_division_by_a_positive_constant_keeps_numpys_meaning(
        name: str, t: str, divisor: int, seed: int) -> None:
    """Property: the short form for a known positive divisor gives what numpy (and the
    guarded form's meaning) gives, on random dividends of both signs and the extremes."""
    dtype = DTYPES[t]
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    a = np.concatenate([rng.integers(info.min, info.max, 48, dtype=dtype, endpoint=True),
                        np.array([0, -1, 1, info.min, info.max, divisor, -divisor], dtype)])
    want = int_refs(a, np.full_like(a, divisor))[name]
    (got,) = run([(f"{{r}}_d = arith.constant {divisor} : {t}\n"
                   f"{{r}} = arith.{name} %a, {{r}}_d : {t}", t)], a)
    assert_same(got, want, f"{name} {t} by {divisor}")


def _vector_max_kernel(op: str, constant: float, constant_first: bool) -> str:
    operands = "%c8, %x" if constant_first else "%x, %c8"
    return f"""func.func @k(%in: memref<16xf32>, %out: memref<16xf32>, %start: index,
                     %stop: index) attributes {{irtensor.kernel}} {{
      %c0 = arith.constant 0 : index
      %c8i = arith.constant 8 : index
      %c = arith.constant {constant!r} : f32
      %c8 = vector.broadcast %c : f32 to vector<8xf32>
      %x = vector.load %in[%c0] : memref<16xf32>, vector<8xf32>
      %r = arith.{op} {operands} : vector<8xf32>
      vector.store %r, %out[%c0] : memref<16xf32>, vector<8xf32>
      %y = vector.load %in[%c8i] : memref<16xf32>, vector<8xf32>
      %s = arith.{op} {operands.replace("%x", "%y")} : vector<8xf32>
      vector.store %s, %out[%c8i] : memref<16xf32>, vector<8xf32>
      func.return
    }}""".replace("nan", "0x7FC00000")


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(["maximumf", "minimumf"]),
       constant=st.sampled_from([0.0, -0.0, 1.5, -2.0, math.nan]),
       constant_first=st.booleans(),
       x=hnp.arrays(np.float32, 16, elements=st.sampled_from(
           [0.0, -0.0, 1.0, -1.0, 1.5, -2.0, math.inf, -math.inf, math.nan])))
def test_vector_max_min_with_a_constant_keep_numpys_meaning(
        op: str, constant: float, constant_first: bool, x: np.ndarray) -> None:
    """Property: a vector maximumf/minimumf with a constant splat (the tie mask left out
    where the constant settles it) gives np.maximum/np.minimum, signs of zero included."""
    jit = llvm_jit.compile_module(parse(_vector_max_kernel(op, constant, constant_first)))
    out = np.zeros(16, np.float32)
    jit.function("k")(x, out, 0, 1)
    c = np.float32(constant)
    f = np.maximum if op == "maximumf" else np.minimum
    assert_same(out, f(c, x) if constant_first else f(x, c))
