"""fold-constants and the ll canonicalization hooks keep the meaning of programs, bit for bit.

Properties run the reference interpreter before and after the pass and compare
every result bitwise (any NaN matches any NaN; 0.0 does not match -0.0). This
works because the interpreter reduces a row-major copy of its input, so removing
a view never changes the rounding of a sum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.traits import HasCanonicalizationPatternsTrait
from xdsl.transforms.canonicalize import CanonicalizePass

from irtensor import dtypes, ir, passes, shapes
from irtensor.dialects import ll
from irtensor.dialects._base import pad_value_problem, shape_of
from irtensor.interp import run
from irtensor.passes.rewrite.fold_constants import FoldConstants
from irtensor.passes.rewrite.ll_patterns import EXACT_WIDENING, canonicalization_patterns
from irtensor.pipeline import Pipeline
from irtensor.testing import Program, programs, random_input

ALL_TYPES: tuple[Attribute, ...] = (f16, bf16, f32, f64, i32, i64, i1)
FLOAT_SPECIALS = (0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -2.5, 0.1, 1e-3,
                  65504.0, 1e30, 1e-40, math.inf, -math.inf, math.nan)
INT_SPECIALS = (0, 1, -1, 2, 3, -7, 100, 2**31 - 1, -(2**31))
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# --------------------------------------------------------------------------- comparing


def assert_bitwise(got: Sequence[np.ndarray], want: Sequence[np.ndarray]) -> None:
    """Same dtype, shape and bits; any NaN matches any NaN (the text keeps no payloads)."""
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"result #{i}"
        if g.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w, err_msg=f"result #{i}")
            continue
        g_nan, w_nan = np.isnan(g.astype(np.float64)), np.isnan(w.astype(np.float64))
        np.testing.assert_array_equal(g_nan, w_nan, err_msg=f"result #{i}: NaN positions")
        bits = np.dtype(f"u{g.dtype.itemsize}")
        np.testing.assert_array_equal(
            g[~g_nan].view(bits), w[~w_nan].view(bits), err_msg=f"result #{i}: bits differ"
        )


def fold(module: ModuleOp, fast_math: bool = False) -> ModuleOp:
    after = module.clone()
    FoldConstants(fast_math=fast_math).apply(ir.make_context(), after)
    ir.verify(after)
    return after


def check_exact(program: Program, after: ModuleOp | None = None) -> None:
    after = after or fold(program.module)
    want = run(program.module, program.inputs)
    got = run(after, program.inputs)
    try:
        assert_bitwise(got, want)
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- before ---\n{program}\n--- after ---\n{after}") from None


def ops_of(module: ModuleOp) -> list[Operation]:
    return [op for op in module.walk() if not isinstance(op, ModuleOp | func.FuncOp)]


# --------------------------------------------------------------------------- programs rich in folds


class Shown(Program):
    """A Program that hypothesis reports as IR text and inputs, not as a dataclass dump."""

    def __repr__(self) -> str:
        return f"{self.module}\ninputs: {self.inputs!r}"


def ll_programs(**kwargs: object) -> st.SearchStrategy[Shown]:
    strategy = programs(dialect="ll", dtypes=ALL_TYPES, **kwargs)  # type: ignore[arg-type]
    return strategy.map(lambda p: Shown(p.module, p.inputs))


class Rich:
    """Grows a function whose values all have one type `t` (conditions: i1 of its shape).

    `safe` keeps to finite constants and to ops that make no NaN or infinity
    out of finite values (for the fast-math property).
    """

    def __init__(self, draw: st.DrawFn, t: TensorType, safe: bool):
        self.draw, self.t, self.safe = draw, t, safe
        self.element, self.shape = t.element_type, tuple(t.get_shape())
        self.block = Block(arg_types=[t] * draw(st.integers(1, 2)))
        self.values: list[SSAValue] = list(self.block.args)

    def emit(self, *ops: Operation) -> SSAValue:
        """Add ops whose last result is an intermediate (not offered as an operand)."""
        for op in ops:
            self.block.add_op(op)
        return ops[-1].results[0]

    def add(self, *ops: Operation) -> SSAValue:
        self.values.append(self.emit(*ops))
        return self.values[-1]

    def pick(self) -> SSAValue:
        return self.draw(st.sampled_from(self.values))

    def const(
        self, value: float | int | bool | None = None, t: TensorType | None = None
    ) -> SSAValue:
        t = t or self.t
        if value is None and dtypes.is_bool(t.element_type):
            value = self.draw(st.booleans())
        elif value is None:
            floats = FLOAT_SPECIALS[:10] if self.safe else FLOAT_SPECIALS
            ints_ = INT_SPECIALS[:7] if self.safe else INT_SPECIALS
            value = self.draw(st.sampled_from(floats if dtypes.is_float(t.element_type) else ints_))
        return self.emit(ll.ConstOp(value, t))

    def operand(self) -> SSAValue:
        """A value of type t; often a fresh constant, so constant subgraphs grow."""
        return self.const() if self.draw(st.integers(0, 2)) == 0 else self.pick()

    def cond(self) -> SSAValue:
        if self.draw(st.booleans()):
            return self.const(t=TensorType(i1, list(self.shape)))
        a = self.operand()
        b = self.operand() if self.draw(st.booleans()) else a
        return self.emit(self.draw(st.sampled_from([ll.CmpLtOp, ll.CmpEqOp]))(a, b))

    def axes(self) -> tuple[int, ...]:
        rank = len(self.shape)
        return tuple(sorted(self.draw(st.sets(st.integers(0, rank - 1))))) if rank else ()


def _unary(b: Rich) -> SSAValue:
    x = b.operand()
    if dtypes.is_bool(b.element):
        return b.add(ll.MaxOp(x, b.operand()))
    if not dtypes.is_float(b.element) or b.safe:
        return b.add(ll.NegOp(x))
    return b.add(b.draw(st.sampled_from([ll.NegOp, *ll.UNARY_OPS]))(x))


def _binary_ops(b: Rich) -> list[type[Operation]]:
    ops: list[type[Operation]] = [ll.MaxOp]
    if not dtypes.is_bool(b.element):
        ops += [ll.AddOp, ll.MulOp]
    if dtypes.is_int(b.element) and not b.safe:
        ops += [ll.IDivOp, ll.ModOp]
    return ops


def _binary(b: Rich) -> SSAValue:
    return b.add(b.draw(st.sampled_from(_binary_ops(b)))(b.operand(), b.operand()))


def _identity(b: Rich) -> SSAValue:
    """x op c for the constants that make identities (and those that just miss one)."""
    if dtypes.is_bool(b.element):
        specials: list[float | int | bool] = [False, True]
    elif dtypes.is_int(b.element):
        specials = [0, 1, -1, -(2**31)]
    else:
        specials = [1.0, -0.0, 0.0, -math.inf, -1.0]
    x, c = b.pick(), b.const(b.draw(st.sampled_from(specials)))
    op = b.draw(st.sampled_from(_binary_ops(b)))
    if op in (ll.IDivOp, ll.ModOp) or b.draw(st.booleans()):
        return b.add(op(x, c))
    return b.add(op(c, x))


def _pairs(b: Rich) -> SSAValue:
    """neg(neg x), reciprocal(reciprocal x), max(x, x), where(c, x, x), where(c, x, y)."""
    x = b.pick()
    kind = b.draw(st.sampled_from(["neg", "reciprocal", "max", "where_same", "where"]))
    if kind == "neg" and not dtypes.is_bool(b.element):
        return b.add(ll.NegOp(b.emit(ll.NegOp(x))))
    if kind == "reciprocal" and dtypes.is_float(b.element):
        return b.add(ll.ReciprocalOp(b.emit(ll.ReciprocalOp(x))))
    if kind == "max":
        return b.add(ll.MaxOp(x, x))
    return b.add(ll.WhereOp(b.cond(), x, x if kind == "where_same" else b.operand()))


def _cast(b: Rich) -> SSAValue:
    """Cast to the same type, or through another type (maybe a wider one) and back."""
    x = b.operand()
    if b.draw(st.booleans()):
        return b.add(ll.CastOp(x, b.element))
    wider = [to for (frm, to) in EXACT_WIDENING if frm == b.element]
    others = [e for e in ALL_TYPES if e != b.element]
    via = b.draw(st.sampled_from(wider if wider and b.draw(st.booleans()) else others))
    return b.add(ll.CastOp(b.emit(ll.CastOp(x, via)), b.element))


def _pad_value(b: Rich, choices: list[float]) -> float:
    """One of `choices` that the element type has (the pad verifier refuses the others)."""
    return b.draw(st.sampled_from([v for v in choices
                                   if pad_value_problem(v, b.element) is None]))


def _identity_movement(b: Rich, x: SSAValue) -> SSAValue:
    s, zeros = b.shape, (0,) * len(b.shape)
    kinds = ["reshape", "permute", "expand", "pad", "shrink", "flip", "stride"]
    kind = b.draw(st.sampled_from(kinds))
    if kind in ("reshape", "expand"):
        return b.add((ll.ReshapeOp if kind == "reshape" else ll.ExpandOp)(x, s))
    if kind == "permute":
        return b.add(ll.PermuteOp(x, tuple(range(len(s)))))
    if kind == "pad":
        value = _pad_value(b, [0.0, -0.0, 1.0, -math.inf, math.nan])
        return b.add(ll.PadOp(x, zeros, zeros, value))
    if kind == "shrink":
        return b.add(ll.ShrinkOp(x, zeros, s))
    if kind == "flip":
        return b.add(ll.FlipOp(x, tuple(a for a in b.axes() if s[a] <= 1)))
    return b.add(ll.StrideOp(x, tuple(b.draw(st.integers(1, 3)) if d <= 1 else 1 for d in s)))


def _pad_back(b: Rich, ops: list[Operation], low: Sequence[int], value: float) -> SSAValue:
    """`ops`, then a pad of the last one back to the shape (`low` before, the rest after)."""
    got = shape_of(ops[-1].results[0])
    high = tuple(d - lo - g for d, lo, g in zip(b.shape, low, got, strict=True))
    return b.add(*ops, ll.PadOp(ops[-1].results[0], tuple(low), high, value))


def _round_trip_movement(b: Rich, x: SSAValue) -> SSAValue:
    """Two movements of one kind, and what brings the shape (not always the values) back."""
    s, rank = b.shape, len(b.shape)
    kind = b.draw(st.sampled_from(["reshape", "permute", "flip", "pad", "shrink", "stride"]))
    if kind == "reshape":
        return b.add(ll.ReshapeOp(b.emit(ll.ReshapeOp(x, (shapes.numel(s), 1))), s))
    if kind == "permute":
        p = tuple(b.draw(st.permutations(range(rank))))
        back = tuple(int(i) for i in np.argsort(p))
        return b.add(ll.PermuteOp(b.emit(ll.PermuteOp(x, p)), back))
    if kind == "flip":
        return b.add(ll.FlipOp(b.emit(ll.FlipOp(x, b.axes())), b.axes()))
    value = _pad_value(b, [0.0, -0.0, 2.0, math.nan])
    if kind == "pad":
        low = tuple(b.draw(st.integers(0, 2)) for _ in s)
        high = tuple(b.draw(st.integers(0, 2)) for _ in s)
        inner = ll.PadOp(x, low, high, value)
        outer = ll.PadOp(inner.res, low, high, value)
        starts = tuple(2 * lo for lo in low)
        limits = tuple(st_ + d for st_, d in zip(starts, s, strict=True))
        return b.add(inner, outer, ll.ShrinkOp(outer.res, starts, limits))
    if kind == "shrink":
        starts = tuple(b.draw(st.integers(0, d)) for d in s)
        limits = tuple(b.draw(st.integers(lo, d)) for lo, d in zip(starts, s, strict=True))
        inner = ll.ShrinkOp(x, starts, limits)
        size = shape_of(inner.res)
        more = tuple(b.draw(st.integers(0, d)) for d in size)
        outer = ll.ShrinkOp(inner.res, more, size)
        low = [a + c for a, c in zip(starts, more, strict=True)]
        return _pad_back(b, [inner, outer], low, value)
    inner = ll.StrideOp(x, tuple(b.draw(st.integers(1, 2)) for _ in s))
    outer = ll.StrideOp(inner.res, tuple(b.draw(st.integers(1, 2)) for _ in s))
    return _pad_back(b, [inner, outer], (0,) * rank, value)


def _view(b: Rich, x: SSAValue) -> SSAValue:
    """A flip, or a permute that keeps the shape: values move, the type stays."""
    s = b.shape
    perm = tuple(b.draw(st.permutations(range(len(s)))))
    if b.draw(st.booleans()) and all(s[p] == d for p, d in zip(perm, s, strict=True)):
        return b.add(ll.PermuteOp(x, perm))
    return b.add(ll.FlipOp(x, b.axes()))


def _movement(b: Rich) -> SSAValue:
    kind = b.draw(st.sampled_from([_identity_movement, _round_trip_movement, _view]))
    return kind(b, b.operand())


def _reduce(b: Rich) -> SSAValue:
    """A reduce (maybe of a reduce), expanded back to the shape (maybe in two steps)."""
    x = b.operand()
    kinds = ["max"] if dtypes.is_bool(b.element) else ["sum", "max"]
    for _ in range(b.draw(st.integers(1, 2))):
        x = b.emit(ll.ReduceOp(b.draw(st.sampled_from(kinds)), x, b.axes()))
    if b.draw(st.booleans()):
        pairs = zip(b.shape, shape_of(x), strict=True)
        x = b.emit(ll.ExpandOp(x, tuple(d if b.draw(st.booleans()) else e for d, e in pairs)))
    return b.add(ll.ExpandOp(x, b.shape))


KINDS = {"unary": _unary, "binary": _binary, "identity": _identity, "pairs": _pairs,
         "cast": _cast, "movement": _movement, "reduce": _reduce}


def special_input(draw: st.DrawFn, t: TensorType, safe: bool) -> np.ndarray:
    """Random values; unless `safe`, NaN, infinities and both zeros in some of them."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    array = random_input(rng, t)
    if array.size and not safe and dtypes.is_float(t.element_type) and draw(st.booleans()):
        flat = array.reshape(-1)
        specials = np.array([0.0, -0.0, math.inf, -math.inf, math.nan], dtype=array.dtype)
        where = rng.random(flat.shape) < 0.3
        flat[where] = rng.choice(specials, size=int(where.sum()))
    return array


@st.composite
def rich_programs(
    draw: st.DrawFn,
    types: Sequence[Attribute] = ALL_TYPES,
    max_ops: int = 12,
    safe: bool = False,
    kinds: Sequence[str] = tuple(KINDS),
) -> Shown:
    """`ll` programs full of constants, identities, movement round trips and reductions."""
    shape = draw(st.lists(st.sampled_from([1, 2, 3, 2, 3, 1, 2, 3, 0]), max_size=3))
    t = TensorType(draw(st.sampled_from(list(types))), shape)
    b = Rich(draw, t, safe)
    for _ in range(draw(st.integers(1, max_ops))):
        KINDS[draw(st.sampled_from(list(kinds)))](b)
    results = [b.values[-1], b.pick()]
    b.block.add_op(func.ReturnOp(*results))
    arg_types = [a.type for a in b.block.args]
    main = func.FuncOp("main", (arg_types, [r.type for r in results]), Region(b.block))
    return Shown(ModuleOp([main]), [special_input(draw, t, safe) for t in arg_types])


@st.composite
def constant_arithmetic(draw: st.DrawFn) -> Shown:
    """An ll binary op on two drawn constants, its result used with an argument: the
    folds of FoldElementwise, steered to in every example."""
    element = draw(st.sampled_from([f16, bf16, f32, f64, i32, i64]))
    shape = draw(st.lists(st.integers(1, 3), max_size=2))
    t = TensorType(element, shape)
    op = draw(st.sampled_from(["add", "mul", "max"]))
    is_int = dtypes.is_int(element)
    numbers = st.integers(-50, 50) if is_int else st.sampled_from([1.5, -2.25, 3.0, 0.1, 7.0])
    a, c = draw(numbers), draw(numbers.filter(lambda v: v != 0))
    text = (f"func.func @main(%x: {t}) -> {t} {{\n"
            f"  %a = ll.const {a} : {t}\n  %c = ll.const {c} : {t}\n"
            f"  %f = ll.{op} %a, %c : {t}\n  %r = ll.add %f, %x : {t}\n"
            f"  func.return %r : {t}\n}}")
    x = random_input(np.random.default_rng(draw(st.integers(0, 2**16))), t)
    return Shown(ir.parse(text), [x])


# --------------------------------------------------------------------------- properties


@given(constant_arithmetic())
def test_folding_constant_arithmetic_is_exact(program: Program) -> None:
    check_exact(program)


@given(rich_programs())
def test_folding_is_exact_on_programs_rich_in_constants_and_identities(program: Program) -> None:
    check_exact(program)


@given(ll_programs(max_ops=8))
def test_folding_is_exact_on_generated_programs(program: Program) -> None:
    check_exact(program)


@given(
    st.one_of(
        rich_programs(kinds=("unary", "binary", "identity", "pairs", "cast", "movement")),
        ll_programs(ops=("elementwise", "movement")),
    )
)
def test_folding_is_exact_under_the_plain_interpreter_without_reductions(program: Program) -> None:
    check_exact(program)


@given(rich_programs(max_ops=16))
def test_only_scalar_constants_no_more_ops_and_a_fixed_point(program: Program) -> None:
    after = fold(program.module)
    for op in ops_of(after):
        assert isinstance(op, (*ll.LL.operations, func.ReturnOp)), f"{op.name} is not an ll op"
        if isinstance(op, ll.ConstOp):
            assert isinstance(op.value, FloatAttr | IntegerAttr)
    assert len(ops_of(after)) <= len(ops_of(program.module))
    again = after.clone()
    FoldConstants().apply(ir.make_context(), again)
    assert ir.to_text(again) == ir.to_text(after)


@given(rich_programs())
def test_canonicalize_with_the_hooks_is_exact(program: Program) -> None:
    after = program.module.clone()
    CanonicalizePass().apply(ir.make_context(), after)
    ir.verify(after)
    check_exact(program, after)


@given(rich_programs(types=(f32, f64), safe=True, max_ops=12))
def test_fast_math_is_close_where_the_program_stays_finite(program: Program) -> None:
    """fast-math may change NaN, inf and signed zeros, and rounds differently: a tolerance."""
    after = fold(program.module, fast_math=True)
    want = run(program.module, program.inputs)
    assume(all(np.isfinite(w).all() for w in want if w.dtype.kind == "f"))
    got = run(after, program.inputs)
    for g, w in zip(got, want, strict=True):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        scale = 1.0 + float(np.abs(w).max(initial=0.0)) if w.dtype.kind == "f" else 1.0
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * scale)


# --------------------------------------------------------------------------- the seed's claims


def test_the_seed_loop_folds_to_the_single_constant_10() -> None:
    module = ir.parse((EXAMPLES / "seed_loop.mlir").read_text())
    after = module.clone()
    Pipeline("fold-constants,dce").run(after)
    const, ret = ops_of(after)
    assert isinstance(const, ll.ConstOp) and const.scalar == 10.0
    assert isinstance(ret, func.ReturnOp) and ret.operands[0] == const.res
    assert_bitwise(run(after, []), run(module, []))


def min_of_min(element: str) -> ModuleOp:
    """min(min(x)) as decomposition writes it: -max(-(-max(-x)))."""
    t = lambda shape: f"tensor<{shape}x{element}>"  # noqa: E731
    return ir.parse(f"""
func.func @main(%x: {t("4x5")}) -> {t("1x1")} {{
  %n0 = ll.neg %x : {t("4x5")}
  %m0 = ll.reduce max %n0 axes [1] : {t("4x5")} -> {t("4x1")}
  %n1 = ll.neg %m0 : {t("4x1")}
  %n2 = ll.neg %n1 : {t("4x1")}
  %m1 = ll.reduce max %n2 axes [0] : {t("4x1")} -> {t("1x1")}
  %n3 = ll.neg %m1 : {t("1x1")}
  func.return %n3 : {t("1x1")}
}}""")


@pytest.mark.parametrize(
    ("element", "expected"),
    [("f32", ["ll.neg", "ll.reduce", "ll.reduce", "ll.neg"]),
     ("i32", ["ll.neg", "ll.reduce", "ll.neg"])],
)
def test_min_chains_lose_the_inner_negations(element: str, expected: list[str]) -> None:
    """A chain of k mins costs k max reductions and two negations (not 2k); a lone
    min still costs two negations more than a max. Float max reductions do not
    merge (max picks between 0.0 and -0.0 by order); integer ones do."""
    module = min_of_min(element)
    after = fold(module)
    assert [op.name for op in ops_of(after)][:-1] == expected
    x = random_input(np.random.default_rng(0), module.body.block.first_op.args[0].type)
    assert_bitwise(run(after, [x]), run(module, [x]))


# --------------------------------------------------------------------------- single folds


def one_op(lines: str, result: str) -> ModuleOp:
    return ir.parse(f"func.func @main() -> {result} {{\n{lines}\n  func.return %r : {result}\n}}")


FOLDED = [
    ("%a = ll.const 0.1 : tensor<3xf16>\n%b = ll.const 0.2 : tensor<3xf16>\n"
     "%r = ll.add %a, %b : tensor<3xf16>", "tensor<3xf16>"),
    ("%a = ll.const 3.0 : tensor<2xbf16>\n%r = ll.reciprocal %a : tensor<2xbf16>",
     "tensor<2xbf16>"),
    ("%a = ll.const 1.0e+30 : tensor<2xf32>\n%r = ll.sin %a : tensor<2xf32>", "tensor<2xf32>"),
    ("%a = ll.const 0.7 : tensor<2xf16>\n%r = ll.exp2 %a : tensor<2xf16>", "tensor<2xf16>"),
    ("%a = ll.const -0.0 : tensor<2xf64>\n%r = ll.log2 %a : tensor<2xf64>", "tensor<2xf64>"),
    ("%a = ll.const nan : tensor<2xf32>\n%r = ll.cmpeq %a, %a : tensor<2xf32> -> tensor<2xi1>",
     "tensor<2xi1>"),
    ("%a = ll.const 2147483647 : tensor<2xi32>\n%r = ll.add %a, %a : tensor<2xi32>",
     "tensor<2xi32>"),
    ("%a = ll.const -7 : tensor<2xi64>\n%b = ll.const 0 : tensor<2xi64>\n"
     "%r = ll.mod %a, %b : tensor<2xi64>", "tensor<2xi64>"),
    ("%a = ll.const -2.5 : tensor<2xf32>\n%r = ll.cast %a : tensor<2xf32> -> tensor<2xi32>",
     "tensor<2xi32>"),
    ("%a = ll.const 9007199254740993 : tensor<2xi64>\n"
     "%r = ll.cast %a : tensor<2xi64> -> tensor<2xbf16>", "tensor<2xbf16>"),
    ("%a = ll.const -0.0 : tensor<5xf32>\n%r = ll.reduce sum %a axes [0] : "
     "tensor<5xf32> -> tensor<1xf32>", "tensor<1xf32>"),
    ("%a = ll.const 1.0 : tensor<2047xf16>\n%r = ll.reduce sum %a axes [0] : "
     "tensor<2047xf16> -> tensor<1xf16>", "tensor<1xf16>"),
    ("%a = ll.const 3.0 : tensor<85xbf16>\n%r = ll.reduce sum %a axes [0] : "
     "tensor<85xbf16> -> tensor<1xbf16>", "tensor<1xbf16>"),
    ("%a = ll.const -inf : tensor<4xf32>\n%r = ll.reduce sum %a axes [0] : "
     "tensor<4xf32> -> tensor<1xf32>", "tensor<1xf32>"),
    ("%a = ll.const 0.1 : tensor<3xf32>\n%r = ll.reduce sum %a axes [0] : "
     "tensor<3xf32> -> tensor<1xf32>", "tensor<1xf32>"),
    ("%a = ll.const 1.0 : tensor<2048xf16>\n%r = ll.reduce sum %a axes [0] : "
     "tensor<2048xf16> -> tensor<1xf16>", "tensor<1xf16>"),
    ("%a = ll.const 0.1 : tensor<3000x7xf32>\n%r = ll.reduce sum %a axes [0, 1] : "
     "tensor<3000x7xf32> -> tensor<1x1xf32>", "tensor<1x1xf32>"),
    ("%a = ll.const 3.0e+38 : tensor<2xf32>\n%r = ll.reduce sum %a axes [0] : "
     "tensor<2xf32> -> tensor<1xf32>", "tensor<1xf32>"),
    ("%a = ll.const 1000000000 : tensor<7xi32>\n%r = ll.reduce sum %a axes [0] : "
     "tensor<7xi32> -> tensor<1xi32>", "tensor<1xi32>"),
    ("%a = ll.const nan : tensor<3xf32>\n"
     "%r = ll.pad %a low [1] high [0] value nan : tensor<3xf32> -> tensor<4xf32>", "tensor<4xf32>"),
]
NOT_FOLDED = [
    ("%a = ll.const nan : tensor<2xf32>\n%r = ll.cast %a : tensor<2xf32> -> tensor<2xi32>",
     "tensor<2xi32>"),
    ("%a = ll.const 1.0e+10 : tensor<2xf32>\n%r = ll.cast %a : tensor<2xf32> -> tensor<2xi32>",
     "tensor<2xi32>"),
    ("%a = ll.const 0.0 : tensor<3xf32>\n"
     "%r = ll.pad %a low [1] high [0] value -0.0 : tensor<3xf32> -> tensor<4xf32>",
     "tensor<4xf32>"),
]


@pytest.mark.parametrize(("lines", "result"), FOLDED)
def test_folds_to_one_constant_with_the_interpreters_bits(lines: str, result: str) -> None:
    module = one_op(lines, result)
    after = fold(module)
    assert [op.name for op in ops_of(after)] == ["ll.const", "func.return"]
    assert_bitwise(run(after, []), run(module, []))


@pytest.mark.parametrize(("lines", "result"), NOT_FOLDED)
def test_does_not_fold_what_it_cannot_prove(lines: str, result: str) -> None:
    after = fold(one_op(lines, result))
    assert ops_of(after)[-1].operands[0].owner.name != "ll.const"


@pytest.mark.parametrize(("element", "value", "n", "want"), [
    ("f32", "1.0", 2**40, 2.0**40),
    ("f32", "1.0", 20_000_000, 2e7),
    ("f32", "0.1", 10**8, float(np.float32(float(np.float32(0.1)) * 10**8))),
    ("f16", "1.0", 3000, 3000.0),
    ("bf16", "1.0", 4096, 4096.0),
    ("f64", "0.1", 10**12, 0.1 * 10**12),
])
def test_a_sum_of_a_constant_folds_to_n_times_c_rounded_once(
        element: str, value: str, n: int, want: float) -> None:
    """No loop of n additions runs, at compile time or at run time, however large n is."""
    t = f"tensor<{n}x{element}>"
    module = one_op(f"%a = ll.const {value} : {t}\n"
                    f"%r = ll.reduce sum %a axes [0] : {t} -> tensor<1x{element}>",
                    f"tensor<1x{element}>")
    after = fold(module)
    (const,) = [op for op in ops_of(after) if isinstance(op, ll.ConstOp)]
    assert float(const.scalar) == want


@given(st.integers(-(2**70), 2**70), st.integers(1, 2**40),
       st.sampled_from([np.float16, np.float32, np.float64, ml_dtypes.bfloat16]))
def test_rounded_is_the_nearest_float_ties_to_even(numerator: int, denominator: int,
                                                   dtype: type) -> None:
    q, dtype_ = Fraction(numerator, denominator), np.dtype(dtype)
    got = dtypes.rounded(q, dtype_)
    assert got.dtype == dtype_
    if math.isinf(float(got)):
        assert abs(q) > Fraction(float(ml_dtypes.finfo(dtype_).max))
        return
    bits = np.dtype(f"u{dtype_.itemsize}")
    raw = int(np.asarray(got, dtype_).view(bits))
    error = abs(Fraction(float(got)) - q)
    for step in (-1, 1):  # the floats on either side of `got` (same sign) are no nearer
        other = float(np.asarray(raw + step, bits).view(dtype_)) if raw + step >= 0 else 0.0
        if math.isfinite(other):
            assert error <= abs(Fraction(other) - q), (q, got, other)
            if error == abs(Fraction(other) - q):
                assert raw & 1 == 0, f"{q}: a tie goes to the even neighbour"


def test_folding_an_identity_pad_before_a_sum_changes_only_the_layout() -> None:
    module = ir.parse("""
func.func @main(%x: tensor<4x4x4xf32>) -> tensor<1x1x1xf32> {
  %p = ll.permute %x [2, 0, 1] : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
  %e = ll.pad %p low [0, 0, 0] high [0, 0, 0] : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
  %s = ll.reduce sum %e axes [0, 1, 2] : tensor<4x4x4xf32> -> tensor<1x1x1xf32>
  func.return %s : tensor<1x1x1xf32>
}""")
    after = fold(module)
    assert "ll.pad" not in ir.to_text(after)
    x = random_input(np.random.default_rng(1), TensorType(f32, [4, 4, 4]))
    check_exact(Shown(module, [x]), after)


# --------------------------------------------------------------------------- hooks and registry

HOOKED = (ll.NegOp, ll.CastOp, *ll.BINARY_OPS, *ll.COMPARE_OPS, ll.WhereOp, ll.ReduceOp,
          *ll.MOVEMENT_OPS)


@pytest.mark.parametrize("op_type", HOOKED, ids=lambda t: t.name)
def test_ops_expose_their_identities_to_canonicalize(op_type: type[Operation]) -> None:
    assert op_type.has_trait(HasCanonicalizationPatternsTrait)
    patterns = op_type.get_canonicalization_patterns()  # type: ignore[attr-defined]
    assert patterns and patterns == canonicalization_patterns(op_type)


@pytest.mark.parametrize("op_type", [ll.ConstOp, ll.Exp2Op, ll.Log2Op, ll.SqrtOp, ll.SinOp,
                                     ll.ReciprocalOp], ids=lambda t: t.name)
def test_ops_without_an_exact_identity_have_no_hook(op_type: type[Operation]) -> None:
    assert not op_type.has_trait(HasCanonicalizationPatternsTrait)


def test_registered_with_its_fast_math_option() -> None:
    assert passes.get_pass("fold-constants") is FoldConstants
    assert passes.describe("fold-constants").startswith("evaluate ll ops")
    assert ("fast-math", "bool", False) in passes.pass_options(FoldConstants)
    (pass_,) = Pipeline("fold-constants{fast-math=true}").passes
    assert isinstance(pass_, FoldConstants) and pass_.fast_math
