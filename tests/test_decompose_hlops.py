"""decompose-hlops keeps the meaning of every hl op under the reference interpreter.

Each property draws an op with random shapes (rank 0, size-1 and zero-size axes
included), element types and values (NaN, +-inf, -0.0, the type's extremes,
subnormals; INT_MIN and INT_MAX for ints), runs the function before and after
the pass and compares. Exact definitions must agree bit for bit (NaN where NaN,
and the sign of zero); the others within a bound derived from their definition,
written next to each (`eps` is the epsilon of the type the definition computes
in, f32 for f16/bf16; `ulp` is the result type's epsilon where the result is
rounded from f32 to a half type; both sides may round differently there).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, bf16, f16, f32, f64, i1, i32, i64
from xdsl.ir import Attribute, Block, Operation, Region

from irtensor import dtypes, ir, shapes
from irtensor.dialects import hl, ll
from irtensor.dialects._base import pad_value_problem
from irtensor.interp import run
from irtensor.passes.rewrite.conv_to_mul_sum import ConvToMulSum
from irtensor.passes.rewrite.decompose_hlops import ELEMENTWISE, STRUCTURED, DecomposeHLOps
from irtensor.pipeline import Pipeline
from irtensor.testing import Program, programs

FLOATS: tuple[Attribute, ...] = (f32, f64, f16, bf16)
INTS: tuple[Attribute, ...] = (i32, i64)
ELEMENTS: dict[str, tuple[Attribute, ...]] = {
    "float": FLOATS,
    "int": INTS,
    "bool": (i1,),
    "numeric": (*FLOATS, *INTS),
    "any": (*FLOATS, *INTS, i1),
}
# Each property runs the profile's number of examples (dev: 50, ci: 200).
EXAMPLES = settings.default.max_examples
Tolerance = tuple[np.ndarray | float, np.ndarray | float]  # (rtol, atol)
ToleranceFn = Callable[[Sequence[np.ndarray], np.dtype], Tolerance]

# --------------------------------------------------------------------------- harness


def module_of(arg_types: Sequence[Attribute], build: Callable[..., Operation]) -> ModuleOp:
    """`@main(args) { return build(*args) }`."""
    block = Block(arg_types=arg_types)
    op = build(*block.args)
    block.add_ops([op, func.ReturnOp(op.results[0])])
    main = func.FuncOp("main", (list(arg_types), [op.results[0].type]), Region(block))
    return ModuleOp([main])


def decompose(module: ModuleOp, conv: bool = False) -> ModuleOp:
    after = module.clone()
    DecomposeHLOps().apply(Context(), after)
    if conv:
        ConvToMulSum().apply(Context(), after)
    ir.verify(after)
    return after


def hl_ops(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("hl.")]


def eps(dtype: np.dtype) -> float:
    """Epsilon of the type a definition computes in (halves compute in f32)."""
    return float(np.finfo(np.float32 if dtype.itemsize == 2 else dtype).eps)


def ulp(dtype: np.dtype) -> float:
    """Epsilon of a half result rounded from f32 (0 for f32 and f64, which are not)."""
    return float(ml_dtypes.finfo(dtype).eps) if dtype.itemsize == 2 else 0.0


def assert_close(
    got: np.ndarray, want: np.ndarray, rtol: np.ndarray | float = 0.0,
    atol: np.ndarray | float = 0.0,
) -> None:
    """Same dtype and shape; NaN where NaN; inf where inf, except that one side may
    overflow where the other is within rtol of the largest finite value; otherwise
    |got - want| <= atol + rtol |want|. With no tolerance the sign of zero must agree too."""
    assert got.dtype == want.dtype, f"dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    if not (got.dtype.kind == "f" or got.dtype == np.dtype(ml_dtypes.bfloat16)):
        np.testing.assert_array_equal(got, want)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    rtol = np.nan_to_num(np.broadcast_to(rtol, w.shape), nan=0.0, posinf=0.0)
    atol = np.nan_to_num(np.broadcast_to(atol, w.shape), nan=0.0, posinf=0.0)
    with np.errstate(invalid="ignore"):
        close = (g == w) | (np.abs(g - w) <= atol + rtol * np.abs(w))
        edge = float(ml_dtypes.finfo(got.dtype).max) / (1 + rtol)
        overflow = (rtol > 0) & (np.sign(g) == np.sign(w)) & (np.minimum(abs(g), abs(w)) >= edge)
    exact = (rtol == 0) & (atol == 0) & (w == 0)
    close &= ~exact | (np.signbit(g) == np.signbit(w))
    bad = (np.isnan(g) != np.isnan(w)) | (~np.isnan(w) & ~(close | overflow))
    if bad.any():
        at = np.argwhere(bad)[:5]
        rows = [f"  at {tuple(i)}: got {g[tuple(i)]!r}, want {w[tuple(i)]!r}" for i in at]
        raise AssertionError(f"{bad.sum()} of {bad.size} elements differ:\n" + "\n".join(rows))


def check(
    module: ModuleOp, inputs: Sequence[np.ndarray], tolerance: ToleranceFn | None = None
) -> None:
    """Run before and after decompose-hlops; no hl op may remain; results must agree."""
    after = decompose(module)
    assert hl_ops(after) == [], f"hl ops left: {hl_ops(after)}"
    (want,), (got,) = run(module, inputs), run(after, inputs)
    rtol, atol = (0.0, 0.0)
    if tolerance is not None and want.dtype.kind not in "biu":
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # means of empty slices
            rtol, atol = tolerance([np.asarray(x, np.float64) for x in inputs], want.dtype)
    try:
        assert_close(got, want, rtol, atol)
    except AssertionError as e:
        raise AssertionError(f"{e}\ninputs: {inputs}\n{ir.to_text(after)}") from None


# --------------------------------------------------------------------------- values


def float_values(dtype: np.dtype, moderate: bool, finite: bool) -> st.SearchStrategy[float]:
    info = ml_dtypes.finfo(dtype)
    specials = [0.0, -0.0] if finite else [0.0, -0.0, math.inf, -math.inf, math.nan]
    if moderate:  # no overflow in sums, whatever the order
        limit = 100.0 if dtype.itemsize == 2 else 1e4
        return st.floats(-limit, limit) | st.sampled_from(specials)
    extremes = [float(info.max), -float(info.max), float(info.tiny), float(info.smallest_subnormal),
                -float(info.smallest_subnormal), 1.0, -1.0, 0.5, 3.0, -3.0]
    return (st.floats(-10, 10) | st.floats(width=64) | st.sampled_from(specials + extremes)
            | st.integers(-6, 6).map(float))


def int_values(dtype: np.dtype) -> st.SearchStrategy[int]:
    info = np.iinfo(dtype)
    return st.integers(-8, 8) | st.integers(int(info.min), int(info.max)) | st.sampled_from(
        [int(info.min), int(info.max), int(info.min) + 1, int(info.max) - 1]
    )


@st.composite
def arrays(
    draw: st.DrawFn, element: Attribute, shape: Sequence[int], moderate: bool = False,
    finite: bool = False,
) -> np.ndarray:
    """Values of `element`: floats with NaN, +-inf, -0.0, extremes and subnormals (only
    within +-1e4, or +-100 for halves, if `moderate`; no NaN or inf if `finite`)."""
    dtype = dtypes.to_numpy(element)
    if dtypes.is_bool(element):
        values: st.SearchStrategy = st.booleans()
    elif dtypes.is_int(element):
        values = int_values(dtype)
    else:
        values = float_values(dtype, moderate, finite)
    flat = draw(st.lists(values, min_size=math.prod(shape), max_size=math.prod(shape)))
    with np.errstate(all="ignore"):
        source = np.array(flat, np.float64 if dtypes.is_float(element) else dtype)
        return source.astype(dtype).reshape(shape)


DIMS = st.sampled_from((1, 2, 3, 4, 0))


@st.composite
def a_shape(draw: st.DrawFn, min_rank: int = 0, max_rank: int = 3) -> tuple[int, ...]:
    return tuple(draw(DIMS) for _ in range(draw(st.integers(min_rank, max_rank))))


@st.composite
def operand_shape(draw: st.DrawFn, result: Sequence[int]) -> tuple[int, ...]:
    """A shape that broadcasts to `result`: a suffix of it, some axes 1."""
    keep = draw(st.integers(0, len(result)))
    return tuple(1 if draw(st.booleans()) else d for d in result[len(result) - keep :])


def typed(element: Attribute, shape: Sequence[int]) -> TensorType:
    return TensorType(element, list(shape))


# --------------------------------------------------------------------------- tolerances


def _elementwise(bound: Callable[..., Tolerance]) -> ToleranceFn:
    """A tolerance of the broadcast operands."""
    return lambda xs, dtype: bound(*np.broadcast_arrays(*xs), dtype=dtype)


def tol_exp(x: np.ndarray, dtype: np.dtype) -> Tolerance:
    # exp2(fl(x * fl(log2 e))): two roundings scaled by |x log2 e| in the exponent, times
    # ln 2, plus exp2's own rounding: (|x| + 2) eps; a half result rounds once more.
    return (np.abs(x) + 2) * eps(dtype) + ulp(dtype), _tiny(dtype)


def tol_sigmoid(x: np.ndarray, dtype: np.dtype) -> Tolerance:
    # exp's bound carried through 1 + e and a reciprocal (each one rounding); the
    # interpreter rounds three times in a half type, this definition once.
    return (np.abs(x) + 4) * eps(dtype) + 2 * ulp(dtype), _tiny(dtype)


def tol_tanh(x: np.ndarray, dtype: np.dtype) -> Tolerance:
    # 2 sigmoid(2x) - 1: sigmoid's error is relative to a value <= 1 and the weight of
    # its |x| term, s (1 - s) 2|x|, is below 1/2: an absolute 8 eps (relative near 0).
    return eps(dtype) + ulp(dtype), 8 * eps(dtype)


def tol_cos(x: np.ndarray, dtype: np.dtype) -> Tolerance:
    # 1 - 2 s^2, s = sin(x/2): s^2 within 3 eps/2 relative, 2 s^2 <= 2: absolute 4 eps.
    return eps(dtype) + ulp(dtype), 4 * eps(dtype)


def tol_two_roundings(*xs: np.ndarray, dtype: np.dtype) -> Tolerance:
    # log: log2(x) * fl(ln 2); div: x * fl(1 / y); mean: sum * fl(1 / n): a product of
    # two rounded factors, rounded: 2 eps where numpy rounds once.
    return 2 * eps(dtype) + ulp(dtype), _tiny(dtype)


def tol_pow(x: np.ndarray, y: np.ndarray, dtype: np.dtype) -> Tolerance:
    # exp2(y log2|x|): the exponent's two roundings scale with |y log2|x||, as for exp.
    scale = np.abs(y * np.log2(np.abs(x)))
    return (np.where(np.isfinite(scale), scale, 0) + 3) * eps(dtype) + ulp(dtype), _tiny(dtype)


def _tiny(dtype: np.dtype) -> float:
    """A result in the subnormal range has an absolute error of its last place."""
    return 2 * float(ml_dtypes.finfo(dtype).smallest_subnormal)


# --------------------------------------------------------------------------- elementwise ops


@dataclass(frozen=True)
class Spec:
    op: type[Operation]
    elements: str
    tolerance: ToleranceFn | None = None  # None: exact

    def __str__(self) -> str:
        return self.op.name


UNARY = [
    Spec(hl.NegOp, "numeric"), Spec(hl.AbsOp, "numeric"), Spec(hl.ReluOp, "numeric"),
    Spec(hl.ExpOp, "float", _elementwise(tol_exp)), Spec(hl.Exp2Op, "float"),
    Spec(hl.LogOp, "float", _elementwise(tol_two_roundings)), Spec(hl.Log2Op, "float"),
    Spec(hl.SqrtOp, "float"), Spec(hl.RsqrtOp, "float"), Spec(hl.ReciprocalOp, "float"),
    Spec(hl.SinOp, "float"), Spec(hl.CosOp, "float", _elementwise(tol_cos)),
    Spec(hl.SigmoidOp, "float", _elementwise(tol_sigmoid)),
    Spec(hl.TanhOp, "float", _elementwise(tol_tanh)), Spec(hl.NotOp, "bool"),
]
BINARY = [
    Spec(hl.AddOp, "numeric"), Spec(hl.SubOp, "numeric"), Spec(hl.MulOp, "numeric"),
    Spec(hl.DivOp, "float"),
    Spec(hl.PowOp, "float", _elementwise(tol_pow)),
    Spec(hl.MaximumOp, "any"), Spec(hl.MinimumOp, "any"), Spec(hl.IDivOp, "int"),
    Spec(hl.ModOp, "int"), Spec(hl.AndOp, "bool"), Spec(hl.OrOp, "bool"), Spec(hl.XorOp, "bool"),
    Spec(hl.LtOp, "any"), Spec(hl.LeOp, "any"), Spec(hl.GtOp, "any"), Spec(hl.GeOp, "any"),
    Spec(hl.EqOp, "any"), Spec(hl.NeOp, "any"),
]


@pytest.mark.parametrize("spec", UNARY, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_unary_ops_keep_their_meaning(spec: Spec, data: st.DataObject) -> None:
    element = data.draw(st.sampled_from(ELEMENTS[spec.elements]))
    shape = data.draw(a_shape())
    x = data.draw(arrays(element, shape))
    check(module_of([typed(element, shape)], spec.op), [x], spec.tolerance)


@pytest.mark.parametrize("spec", BINARY, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_binary_ops_broadcast_and_keep_their_meaning(spec: Spec, data: st.DataObject) -> None:
    element = data.draw(st.sampled_from(ELEMENTS[spec.elements]))
    result = data.draw(a_shape())
    sx, sy = data.draw(operand_shape(result)), data.draw(operand_shape(result))
    if data.draw(st.booleans()):
        sx, sy = sy, sx
    x, y = data.draw(arrays(element, sx)), data.draw(arrays(element, sy))
    module = module_of([typed(element, sx), typed(element, sy)], spec.op)
    check(module, [x, y], spec.tolerance)


def test_div_by_extreme_divisors_is_numpys_quotient() -> None:
    """A subnormal divisor (whose reciprocal overflows f32), a huge one (whose reciprocal
    is subnormal) and a quotient a * (1 / b) rounds to the other side of a half: each
    numpy's correctly rounded quotient, as x * (1 / y) was not."""
    x = np.array([1e-30, 1.8285896e38, 0.0, -2.5], np.float32)
    y = np.array([1e-40, 3.3926699e38, 1e-40, 0.019607844], np.float32)
    module = module_of([typed(f32, (4,)), typed(f32, (4,))], hl.DivOp)
    (want,), (got,) = run(module, [x, y]), run(decompose(module), [x, y])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, x / y)
    assert 9e9 < got[0] < 2e10 and got[3] == np.float32(-127.49999)


@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_where_broadcasts_three_operands(data: st.DataObject) -> None:
    element = data.draw(st.sampled_from(ELEMENTS["any"]))
    result = data.draw(a_shape())
    sc, sx, sy = (data.draw(operand_shape(result)) for _ in range(3))
    c = data.draw(arrays(i1, sc))
    x, y = data.draw(arrays(element, sx)), data.draw(arrays(element, sy))
    module = module_of([typed(i1, sc), typed(element, sx), typed(element, sy)], hl.WhereOp)
    check(module, [c, x, y])


@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_cast_is_ll_cast(data: st.DataObject) -> None:
    source, target = (data.draw(st.sampled_from(ELEMENTS["any"])) for _ in range(2))
    shape = data.draw(a_shape())
    x = data.draw(arrays(source, shape))
    check(module_of([typed(source, shape)], functools.partial(hl.CastOp, element=target)), [x])


# --------------------------------------------------------------------------- pow's special cases


def test_pow_follows_numpy_on_every_special_case() -> None:
    """numpy.power's (C99's) cases: x**0 = 1 (NaN too), 1**y = 1, (-1)**inf = 1, signs of
    negative bases (-0.0 and -inf too) to odd powers, NaN for negative ** non-integer."""
    values = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 2.5, -2.5, 1e30, -1e30,
              math.inf, -math.inf, math.nan, 2.0**53, -(2.0**53) - 2, 2.0**52 + 1]
    x, y = np.meshgrid(np.array(values), np.array(values))
    for dtype in (np.float64, np.float32, np.float16, ml_dtypes.bfloat16):
        with np.errstate(all="ignore"):
            xs, ys = x.astype(dtype), y.astype(dtype)
        element = dtypes.from_numpy(np.dtype(dtype))
        module = module_of([typed(element, xs.shape)] * 2, hl.PowOp)
        check(module, [xs, ys], _elementwise(tol_pow))


# --------------------------------------------------------------------------- reductions


@st.composite
def axes_of(draw: st.DrawFn, rank: int) -> tuple[int, ...]:
    return tuple(sorted(draw(st.sets(st.integers(0, rank - 1), max_size=rank)))) if rank else ()


def tol_var(
    xs: Sequence[np.ndarray], dtype: np.dtype, axes: tuple[int, ...], keepdim: bool,
    correction: int,
) -> Tolerance:
    # The mean may differ by dm = 2 (eps + ulp) |mean|, so each d = x - mean by dm:
    # sum d^2 moves by <= 2 dm sum|d| + n dm^2, divided by n - correction.
    x = xs[0]
    n = shapes.numel([x.shape[a] for a in axes])
    m = np.mean(x, axis=axes, keepdims=True) if n else np.zeros_like(x, shape=())
    dm = 2 * (eps(dtype) + ulp(dtype)) * np.abs(m)
    spread = np.sum(2 * dm * np.abs(x - m) + dm * dm, axis=axes, keepdims=keepdim)
    return 4 * eps(dtype) + 2 * ulp(dtype), spread / max(n - correction, 1) + _tiny(dtype)


REDUCTIONS = [
    Spec(hl.SumOp, "numeric"), Spec(hl.MaxOp, "any"), Spec(hl.MinOp, "any"),
    Spec(hl.MeanOp, "float"), Spec(hl.VarOp, "float"),
]


@pytest.mark.parametrize("spec", REDUCTIONS, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_reductions_keep_their_meaning(spec: Spec, data: st.DataObject) -> None:
    element = data.draw(st.sampled_from(ELEMENTS[spec.elements]))
    shape = data.draw(a_shape())
    axes, keepdim = data.draw(axes_of(len(shape))), data.draw(st.booleans())
    x = data.draw(arrays(element, shape))
    build = functools.partial(spec.op, axes=axes, keepdim=keepdim)
    tolerance: ToleranceFn | None = None
    if spec.op is hl.VarOp:
        correction = data.draw(st.integers(0, 2))
        build = functools.partial(hl.VarOp, axes=axes, keepdim=keepdim, correction=correction)
        tolerance = functools.partial(tol_var, axes=axes, keepdim=keepdim, correction=correction)
    elif spec.op is hl.MeanOp:
        tolerance = _elementwise(tol_two_roundings)
    check(module_of([typed(element, shape)], build), [x], tolerance)


# --------------------------------------------------------------------------- movement

PAD_VALUES = st.sampled_from([0.0, -0.0, 1.5, -2.0, 7.0, math.inf, -math.inf, math.nan])


@st.composite
def movements(draw: st.DrawFn, element: Attribute) -> tuple[ModuleOp, list[np.ndarray]]:
    """One movement op of each kind, with random parameters."""
    shape = draw(a_shape())
    rank = len(shape)
    kind = draw(st.sampled_from(["reshape", "permute", "broadcast_to", "pad", "slice", "flip",
                                 "concat"]))
    build: Callable[..., Operation]
    if kind == "reshape":
        new = draw(st.permutations(shape)) + [1] * draw(st.integers(0, 1))
        build = functools.partial(hl.ReshapeOp, shape=tuple(new))
    elif kind == "permute":
        build = functools.partial(hl.PermuteOp, perm=tuple(draw(st.permutations(range(rank)))))
    elif kind == "broadcast_to":
        lead = draw(st.lists(DIMS, max_size=2))
        grown = tuple([*lead, *(draw(DIMS) if d == 1 else d for d in shape)])
        build = functools.partial(hl.BroadcastToOp, shape=grown)
    elif kind == "pad":
        low, high = (tuple(draw(st.integers(0, 2)) for _ in shape) for _ in range(2))
        value = draw(PAD_VALUES.filter(lambda v: pad_value_problem(v, element) is None))
        build = functools.partial(hl.PadOp, low=low, high=high, value=value)
    elif kind == "slice":
        starts = tuple(draw(st.integers(0, d)) for d in shape)
        limits = tuple(draw(st.integers(s, d)) for s, d in zip(starts, shape, strict=True))
        steps = tuple(draw(st.integers(1, 3)) for _ in shape)
        build = functools.partial(hl.SliceOp, starts=starts, limits=limits, steps=steps)
    elif kind == "flip":
        build = functools.partial(hl.FlipOp, axes=draw(axes_of(rank)))
    else:
        return draw(concats(element, shape))
    x = draw(arrays(element, shape))
    return module_of([typed(element, shape)], build), [x]


@st.composite
def concats(
    draw: st.DrawFn, element: Attribute, shape: tuple[int, ...]
) -> tuple[ModuleOp, list[np.ndarray]]:
    shape = shape or (draw(DIMS),)
    axis = draw(st.integers(0, len(shape) - 1))
    parts = [tuple(draw(DIMS) if a == axis else d for a, d in enumerate(shape))
             for _ in range(draw(st.integers(1, 3)))]
    inputs = [draw(arrays(element, s)) for s in parts]
    module = module_of([typed(element, s) for s in parts], lambda *vs: hl.ConcatOp(list(vs), axis))
    return module, inputs


@settings(max_examples=EXAMPLES * 2)
@given(data=st.data())
def test_movement_ops_are_ll_movement_ops(data: st.DataObject) -> None:
    element = data.draw(st.sampled_from(ELEMENTS["any"]))
    module, inputs = data.draw(movements(element))
    check(module, inputs)
    allowed = {"ll.reshape", "ll.permute", "ll.expand", "ll.pad", "ll.shrink", "ll.stride",
               "ll.flip", "ll.max", "func.func", "func.return"}
    assert {op.name for op in decompose(module).walk()} <= allowed | {"builtin.module"}


# --------------------------------------------------------------------------- matmul


@st.composite
def matmul_shapes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Operand shapes numpy.matmul accepts: 1-D or batched, batch axes broadcasting."""
    n, k, m = draw(DIMS), draw(DIMS), draw(DIMS)
    batch = draw(a_shape(max_rank=2))
    ba, bb = draw(operand_shape(batch)), draw(operand_shape(batch))
    a = (k,) if draw(st.integers(0, 4)) == 0 else (*ba, n, k)
    b = (k,) if draw(st.integers(0, 4)) == 0 else (*bb, k, m)
    return a, b


def tol_matmul(xs: Sequence[np.ndarray], dtype: np.dtype) -> Tolerance:
    # Both sums of k products are within k u sum|a b| of the exact value, whatever the
    # order (and BLAS's); the ll form also rounds each product: (k + 1) eps sum|a b|.
    a, b = xs
    k = a.shape[-1]
    with np.errstate(all="ignore"):
        scale = np.matmul(np.abs(a), np.abs(b))
    return 0.0, (k + 1) * float(ml_dtypes.finfo(dtype).eps) * scale + _tiny(dtype)


@settings(max_examples=EXAMPLES * 2)
@given(data=st.data())
def test_matmul_follows_numpy_matmul(data: st.DataObject) -> None:
    element = data.draw(st.sampled_from(ELEMENTS["numeric"]))
    sa, sb = data.draw(matmul_shapes())
    a, b = data.draw(arrays(element, sa, moderate=True)), data.draw(arrays(element, sb, True))
    module = module_of([typed(element, sa), typed(element, sb)], hl.MatmulOp)
    check(module, [a, b], tol_matmul)


# --------------------------------------------------------------------------- softmax, norms


def tol_softmax(xs: Sequence[np.ndarray], dtype: np.dtype, axis: int) -> Tolerance:
    # e_i = exp(x_i - max) within (t_i + 2) eps, t_i = max - x_i; the sum within
    # (0.4 n + 2) eps (e t <= 1/e, and the maximum's e is 1); then one division.
    x = xs[0]
    t = np.max(x, axis=axis, keepdims=True, initial=-np.inf) - x
    n = x.shape[axis]
    return (t + 0.4 * n + 6) * eps(dtype) + 3 * ulp(dtype), _tiny(dtype)


def tol_log_softmax(xs: Sequence[np.ndarray], dtype: np.dtype, axis: int) -> Tolerance:
    # x_i - max is the same on both sides; log(sum) is off by the sum's relative error
    # plus log's own 2 eps |log sum|.
    x = xs[0]
    shifted = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    log_sum = np.abs(np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True)))
    n = x.shape[axis]
    atol = (0.4 * n + 4 + 2 * log_sum) * eps(dtype) + 2 * ulp(dtype) * (1 + log_sum)
    return eps(dtype) + ulp(dtype), atol


def tol_norm(
    xs: Sequence[np.ndarray], dtype: np.dtype, axes: tuple[int, ...], eps_: float,
    rows: tuple[int, ...] | None = None,
) -> Tolerance:
    # The mean moves by dm = 2 (eps + ulp) |mean| (sum * (1/n), not sum / n), so does each
    # x - mean; the variance by dv (as in tol_var) plus a division's rounding; the result
    # by dm / sqrt(var + eps_) + |result| dv / (2 (var + eps_)). group_norm: of `rows`.
    x = xs[0] if rows is None else xs[0].reshape(rows)
    n = shapes.numel([x.shape[a] for a in axes])
    m = np.mean(x, axis=axes, keepdims=True)
    d = x - m
    v = np.mean(d * d, axis=axes, keepdims=True)
    dm = 2 * (eps(dtype) + ulp(dtype)) * np.abs(m)
    dv = np.sum(2 * dm * np.abs(d) + dm * dm, axis=axes, keepdims=True) / n
    dv = dv + 2 * (eps(dtype) + ulp(dtype)) * v
    den = np.sqrt(v + eps_)
    atol = dm / den + np.abs(d / den) * dv / (2 * den * den)
    return 4 * (eps(dtype) + ulp(dtype)), atol.reshape(xs[0].shape)


@st.composite
def nn_cases(
    draw: st.DrawFn, kind: str
) -> tuple[ModuleOp, list[np.ndarray], ToleranceFn]:
    element = draw(st.sampled_from(FLOATS))
    shape = draw(a_shape(min_rank=1 if kind in ("softmax", "log_softmax") else 0))
    if kind in ("batch_norm", "group_norm") and len(shape) < 2:
        shape = (draw(DIMS), draw(DIMS), *shape)
    eps_ = draw(st.sampled_from([1e-5, 1e-3, 0.5]))  # eps > 0: see docs (constant slices)
    x = draw(arrays(element, shape, moderate=kind not in ("softmax", "log_softmax")))
    build: Callable[..., Operation]
    if kind in ("softmax", "log_softmax"):
        axis = draw(st.integers(0, len(shape) - 1))
        op = hl.SoftmaxOp if kind == "softmax" else hl.LogSoftmaxOp
        bound = tol_softmax if kind == "softmax" else tol_log_softmax
        build, tol = functools.partial(op, axis=axis), functools.partial(bound, axis=axis)
    elif kind == "layer_norm":
        axes = draw(axes_of(len(shape)))
        build = functools.partial(hl.LayerNormOp, axes=axes, eps=eps_)
        tol = functools.partial(tol_norm, axes=axes, eps_=eps_)
    elif kind == "batch_norm":
        axes = tuple(a for a in range(len(shape)) if a != 1)
        build = functools.partial(hl.BatchNormOp, eps=eps_)
        tol = functools.partial(tol_norm, axes=axes, eps_=eps_)
    else:
        groups = draw(st.sampled_from([g for g in (1, 2, 3, 4) if shape[1] % g == 0]))
        rows = (shape[0], groups, shapes.numel(shape[1:]) // groups)
        build = functools.partial(hl.GroupNormOp, groups=groups, eps=eps_)
        tol = functools.partial(tol_norm, axes=(2,), eps_=eps_, rows=rows)
    return module_of([typed(element, shape)], build), [x], tol


@pytest.mark.parametrize("kind", ["softmax", "log_softmax", "layer_norm", "batch_norm",
                                  "group_norm"])
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_softmax_and_norms_keep_their_meaning(kind: str, data: st.DataObject) -> None:
    module, inputs, tolerance = data.draw(nn_cases(kind))
    check(module, inputs, tolerance)


# --------------------------------------------------------------------------- whole programs

# The definitions that are not bit-exact; a program without them must agree exactly.
INEXACT = (hl.ExpOp, hl.LogOp, hl.SigmoidOp, hl.TanhOp, hl.CosOp, hl.MeanOp, hl.PowOp,
           hl.VarOp, hl.SoftmaxOp, hl.LogSoftmaxOp, hl.MatmulOp)


@settings(max_examples=EXAMPLES * 2)
@given(programs(dialect="hl", dtypes=ELEMENTS["any"], max_ops=6))
def test_generated_programs_keep_their_meaning(program: Program) -> None:
    after = decompose(program.module)
    assert hl_ops(after) == [], f"hl ops left: {hl_ops(after)}"
    want, got = run(program.module, program.inputs), run(after, program.inputs)
    inexact = any(isinstance(op, INEXACT) for op in program.module.walk())
    for g, w in zip(got, want, strict=True):
        tol = 64 * float(ml_dtypes.finfo(w.dtype).eps) if inexact and w.dtype.kind not in "biu" \
            else 0.0
        assert_close(g, w, tol, tol)


def test_every_hl_op_has_a_definition_or_is_left_to_conv_to_mul_sum() -> None:
    conv_ops = {hl.Conv2dOp, hl.MaxPool2dOp, hl.AvgPool2dOp}
    defined = set(ELEMENTWISE) | set(STRUCTURED)
    assert defined.isdisjoint(conv_ops)
    assert {type(op) if not isinstance(op, type) else op for op in hl.HL.operations} == (
        defined | conv_ops
    )


def test_conv_and_pools_are_left_alone() -> None:
    x, w = typed(f32, (1, 2, 5, 5)), typed(f32, (4, 2, 3, 3))
    conv = module_of([x, w], functools.partial(hl.Conv2dOp, padding=1))
    max_pool = module_of([x], functools.partial(hl.MaxPool2dOp, kernel=2))
    avg_pool = module_of([x], functools.partial(hl.AvgPool2dOp, kernel=2, strides=1))
    assert hl_ops(decompose(conv)) == ["hl.conv2d"]
    assert hl_ops(decompose(max_pool)) == ["hl.max_pool2d"]
    assert hl_ops(decompose(avg_pool)) == ["hl.avg_pool2d"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pow_of_negative_infinity_and_zero_to_fractional_powers(dtype: type) -> None:
    """C99 (and numpy's array power): a negative zero or infinity keeps its sign only for
    odd integer powers; 1.5 is not odd. Rank 0 too (numpy's 0-d power differs there)."""
    y = np.array([0.5, 1.5, 2.5, 3.0, -0.5, -1.5, -3.0, 2.0], dtype)
    for base in (-np.inf, -0.0):
        x = np.full_like(y, base)
        element = f32 if dtype == np.float32 else f64
        module = module_of([typed(element, y.shape), typed(element, y.shape)], hl.PowOp)
        check(module, [x, y])
        with np.errstate(all="ignore"):
            assert_close(run(decompose(module), [x, y])[0], np.power(x, y), 0.0, 0.0)
    scalar = module_of([typed(f32, ()), typed(f32, ())], hl.PowOp)
    check(scalar, [np.array(-np.inf, np.float32), np.array(0.5, np.float32)])


@pytest.mark.parametrize("one_pass", [True, False])
def test_the_one_pass_moments_option(one_pass: bool) -> None:
    """On: an f32 layer norm's statistics are one f64 sum of a stacked pair; off (what
    autograd decomposes with): the two-pass f32 form. Both keep the meaning."""
    module = ir.parse("""
func.func @main(%x: tensor<5x40xf32>) -> tensor<5x40xf32> {
  %0 = hl.layer_norm %x axes [1] : tensor<5x40xf32>
  func.return %0 : tensor<5x40xf32>
}""")
    x = (np.random.default_rng(1).standard_normal((5, 40)) * 3 + 100).astype(np.float32)
    (want,) = run(module, [x])
    flag = "true" if one_pass else "false"
    Pipeline(f"decompose-hlops{{one-pass-moments={flag}}},cse").run(module)
    assert hl_ops(module) == []
    reduces = [op for op in module.walk() if isinstance(op, ll.ReduceOp)]
    assert len(reduces) == (1 if one_pass else 2)
    assert ("f64" in ir.to_text(module)) == one_pass
    (got,) = run(module, [x])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_var_whose_mean_overflows_is_inf_as_numpy() -> None:
    """The f32 sum of these overflows: numpy's var is inf, and so are the interpreter's
    (which must not make inf - inf of its rounding correction) and the one-pass form's."""
    x = np.array([5.07e30, 3.4028235e38], np.float32)
    for correction in (0, 1):
        module = module_of([typed(f32, (2,))], functools.partial(
            hl.VarOp, axes=(0,), keepdim=False, correction=correction))
        with np.errstate(all="ignore"):
            want = np.var(x, ddof=correction)
        assert np.isinf(want)
        (interpreted,), (decomposed,) = run(module, [x]), run(decompose(module), [x])
        np.testing.assert_array_equal(interpreted, want)
        np.testing.assert_array_equal(decomposed, want)


def test_f64_var_whose_correction_overflows_is_inf_as_numpy() -> None:
    """sum(d) of these is 2e292: its square overflows, and with sum(d**2) = inf the
    two-pass correction must leave inf (numpy's), not inf - inf."""
    x = np.array([0.0, 0.0, np.finfo(np.float64).max])
    module = module_of([typed(f64, (3,))], functools.partial(
        hl.VarOp, axes=(0,), keepdim=False, correction=0))
    with np.errstate(all="ignore"):
        (interpreted,), (decomposed,) = run(module, [x]), run(decompose(module), [x])
    assert np.isinf(interpreted) and np.isinf(decomposed)
