"""Random well-typed programs for hypothesis: `programs()` and its op families.

`programs()` draws well-typed random programs in `hl` or `ll` together with
matching numpy inputs; shapes include size-1 and zero-size axes and rank 0.
`register_profiles()` adds the `ci` and `dev` hypothesis profiles. Use::

    from irtensor.testing import programs
    from hypothesis import given

    @given(programs(dialect="ll", max_ops=6))
    def test_my_pass(program): ...
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from irtensor import dtypes, shapes
from irtensor.dialects import hl, ll
from irtensor.dialects._base import element_of, pad_value_problem, shape_of
from irtensor.testing import planting


def register_profiles() -> None:
    """Hypothesis profiles: `ci` (enough examples to mean something, bounded time), `dev`."""
    slow_ok = [HealthCheck.too_slow]
    settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=slow_ok)
    settings.register_profile("dev", max_examples=50, deadline=None, suppress_health_check=slow_ok)


@dataclass
class Program:
    """A module whose `@main` takes `inputs` (numpy arrays of the argument types)."""

    module: ModuleOp
    inputs: list[np.ndarray]

    def __str__(self) -> str:
        return str(self.module)

    def __repr__(self) -> str:
        """The IR text and the inputs' types: what hypothesis prints for a failing example
        (the shrunk program, readable and short)."""
        from irtensor import ir

        inputs = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.inputs)
        return f"Program(inputs=[{inputs}], ir=\n{ir.to_text(self.module)})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """hypothesis's pretty printer shows the same short form."""
        printer.text(repr(self))


Draw = Callable[[st.SearchStrategy], object]

# How far one op's float result may be from the exact one, relative, per dtype: about two
# ulps for the half types; the test suite's and the fuzzer's tolerance.
RTOL: dict[np.dtype, float] = {
    np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-6,
    np.dtype(np.float16): 2e-3, np.dtype(ml_dtypes.bfloat16): 1.6e-2,
}


def random_input(rng: np.random.Generator, t: TensorType, special: float = 0.0) -> np.ndarray:
    """Small values of `t`; with probability `special` an element is an edge value
    instead (NaN, infinities, signed zeros, huge values, the int extremes)."""
    shape, element = tuple(t.get_shape()), t.element_type
    if dtypes.is_bool(element):
        return rng.random(shape) < 0.5
    dtype = dtypes.to_numpy(element)
    if dtypes.is_int(element):
        x = np.asarray(rng.integers(-8, 9, shape)).astype(dtype)  # unsigned: -1 wraps
        info = np.iinfo(dtype)
        edges = np.array([info.min, info.max, 0, info.max if info.min == 0 else -1], dtype)
    else:
        x = np.asarray(rng.standard_normal(shape) * 2).astype(dtype)
        big = float(ml_dtypes.finfo(dtype).max) / 2
        edges = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, big, -big], dtype)
    if special > 0 and x.size:
        where = rng.random(shape) < special
        x[where] = rng.choice(edges, size=int(where.sum()))
    return x


# Sizes past the vector width with tails, past split-reductions' 4096, past the 65536
# points at which the llvm device starts threads.
BIG_AXES = (5, 7, 9, 16, 17, 33, 64, 100, 257, 4097, 70000)


class _Builder:
    """Grows one function body from drawn choices; every op is valid by construction."""

    def __init__(self, draw: Draw, dialect: str, max_rank: int, max_dim: int):
        self.draw, self.dialect = draw, dialect
        self.max_rank, self.max_dim = max_rank, max_dim
        self.block = Block()
        self.values: list[SSAValue] = []
        self.target: str | None = None  # the op being planted (irtensor.testing.planting)

    def shape(self, big: float = 0.0) -> tuple[int, ...]:
        """Small axes; with chance `big`, one axis of a size that makes a device take
        another path (vector bodies and tails, split reductions, threads)."""
        rank = self.draw(st.integers(0, self.max_rank))
        dims = [self.draw(st.integers(0, self.max_dim)) for _ in range(rank)]
        # drawn so that shrinking (towards 0) leads away from big axes
        if big > 0 and rank and self.draw(st.integers(0, 99)) >= 100 - round(big * 100):
            dims[self.draw(st.integers(0, rank - 1))] = self.draw(st.sampled_from(BIG_AXES))
        return tuple(dims)

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        self.values.append(op.results[0])
        return op.results[0]

    def fresh(self, shape: Sequence[int], element: Attribute) -> SSAValue:
        """A value of exactly this type: an existing one, or a new argument of @main."""
        t = TensorType(element, list(shape))
        if (v := self.pick(lambda v: v.type == t)) is not None and self.draw(st.booleans()):
            return v
        arg = self.block.insert_arg(t, len(self.block.args))
        self.values.append(arg)
        return arg

    def choose(self, options: Sequence[Any]) -> Any:
        """One of `options`; while planting (`target` set), the ones that make the target
        op when there are such (an op class of that name, a kind of op that includes it)."""
        options = list(options)
        if self.target is not None:
            hits = [o for o in options if self.target in _names_of(o)]
            options = hits or options
        return self.draw(st.sampled_from(options))

    def pick(self, want: Callable[[SSAValue], bool] = lambda v: True) -> SSAValue | None:
        fits = [v for v in self.values if want(v)]
        return self.draw(st.sampled_from(fits)) if fits else None

    def const(self, shape: Sequence[int], element: Attribute) -> SSAValue:
        if dtypes.is_bool(element):
            value: float | int | bool = self.draw(st.booleans())
        elif dtypes.is_unsigned(element):
            top = int(np.iinfo(dtypes.to_numpy(element)).max)  # -1, wrapped
            value = self.draw(st.integers(0, 5) | st.just(top))
        elif dtypes.is_int(element):
            value = self.draw(st.integers(-5, 5))
        else:
            value = self.draw(st.sampled_from([0.0, 1.0, -1.5, 2.0, 0.5]))
        return self.add(ll.ConstOp(value, TensorType(element, list(shape))))

    def partner(self, a: SSAValue, same_shape: bool) -> SSAValue:
        """A second operand for `a`: same element type, same or broadcastable shape."""
        sa, ea = shape_of(a), element_of(a)

        def fits(v: SSAValue) -> bool:
            if element_of(v) != ea:
                return False
            if same_shape:
                return shape_of(v) == sa
            try:
                return shapes.broadcast(sa, shape_of(v)) == sa
            except shapes.ShapeError:
                return False

        if (b := self.pick(fits)) is not None and self.draw(st.booleans()):
            return b
        if same_shape:
            return self.const(sa, ea)
        keep = self.draw(st.integers(0, len(sa)))
        suffix = [d if self.draw(st.booleans()) else 1 for d in sa[len(sa) - keep:]]
        return self.const(suffix, ea)


UNARY_FLOAT_HL = (hl.ExpOp, hl.Exp2Op, hl.LogOp, hl.SqrtOp, hl.ReciprocalOp, hl.SinOp,
                  hl.CosOp, hl.SigmoidOp, hl.TanhOp, hl.RsqrtOp, hl.Log2Op)
UNARY_NUMERIC_HL = (hl.NegOp, hl.AbsOp, hl.ReluOp)
BINARY_HL = (hl.AddOp, hl.SubOp, hl.MulOp, hl.MaximumOp, hl.MinimumOp)
COMPARE_HL = (hl.LtOp, hl.LeOp, hl.GtOp, hl.GeOp, hl.EqOp, hl.NeOp)
UNARY_FLOAT_LL = (ll.Exp2Op, ll.Log2Op, ll.SqrtOp, ll.ReciprocalOp, ll.SinOp)
BINARY_LL = (ll.AddOp, ll.MulOp, ll.MaxOp)
BINARY_FLOAT_LL = (ll.DivOp,)


# The ops each kind a family draws can make: how `_Builder.choose` steers towards one.
KIND_OPS: dict[str, set[str]] = {
    "unary": {c.name for c in (*UNARY_FLOAT_HL, *UNARY_NUMERIC_HL, *UNARY_FLOAT_LL)} | {"ll.neg"},
    "binary": {c.name for c in (*BINARY_HL, *BINARY_LL, *BINARY_FLOAT_LL)},
    "compare": {c.name for c in COMPARE_HL} | {"ll.cmplt", "ll.cmpeq"},
    "where": {"hl.where", "ll.where"}, "cast": {"hl.cast", "ll.cast"},
    "expand": {"hl.broadcast_to", "ll.expand"}, "shrink": {"hl.slice", "ll.shrink"},
    "float": {"hl.div", "hl.pow"}, "int": {"hl.idiv", "hl.mod"},
    "bool": {"hl.and", "hl.or", "hl.xor"}, "not": {"hl.not"},
}


def _names_of(option: object) -> set[str]:
    if isinstance(option, type) and isinstance(getattr(option, "name", None), str):
        return {option.name}  # type: ignore[attr-defined]
    if isinstance(option, str):
        return KIND_OPS.get(option) or {f"hl.{option}", f"ll.{option}"}
    return set()


def _is_float(v: SSAValue) -> bool:
    return dtypes.is_float(element_of(v))


def _is_numeric(v: SSAValue) -> bool:
    return not dtypes.is_bool(element_of(v))


def _elementwise(b: _Builder) -> SSAValue | None:
    hl_level = b.dialect == "hl"
    kind = b.choose(["unary", "binary", "compare", "where", "cast"])
    if kind == "unary":
        floats = UNARY_FLOAT_HL if hl_level else UNARY_FLOAT_LL
        numeric = UNARY_NUMERIC_HL if hl_level else (ll.NegOp,)
        if (a := b.pick(_is_numeric)) is None:
            return None
        choices = (floats + numeric) if _is_float(a) else numeric
        return b.add(b.choose(choices)(a))
    if kind in ("binary", "compare"):
        if (a := b.pick(_is_numeric)) is None:
            return None
        other = b.partner(a, same_shape=not hl_level)
        if kind == "compare":
            ops = COMPARE_HL if hl_level else (ll.CmpLtOp, ll.CmpEqOp)
        else:
            ops = BINARY_HL if hl_level else BINARY_LL + (BINARY_FLOAT_LL if _is_float(a)
                                                          else ())
        return b.add(b.choose(ops)(a, other))
    if kind == "where":
        if (a := b.pick()) is None:
            return None
        other = b.partner(a, same_shape=True)
        cond = b.partner(b.const(shape_of(a), dtypes.BOOL_TYPE), same_shape=True)
        return b.add((hl.WhereOp if hl_level else ll.WhereOp)(cond, a, other))
    if (a := b.pick()) is None:
        return None
    target = b.choose([f32, *dtypes.INT_TYPES, dtypes.BOOL_TYPE])
    return b.add((hl.CastOp if hl_level else ll.CastOp)(a, target))


def _reduce(b: _Builder) -> SSAValue | None:
    if (a := b.pick(_is_numeric)) is None:
        return None
    rank = len(shape_of(a))
    axes = tuple(sorted(b.draw(st.sets(st.integers(0, max(rank - 1, 0)), max_size=rank))))
    axes = tuple(x for x in axes if x < rank)
    if b.dialect == "ll":
        return b.add(ll.ReduceOp(b.choose(["sum", "max"]), a, axes))
    ops = [hl.SumOp, hl.MaxOp, hl.MinOp] + ([hl.MeanOp] if _is_float(a) else [])
    return b.add(b.choose(ops)(a, axes, b.draw(st.booleans())))


def _movement(b: _Builder) -> SSAValue | None:
    if (a := b.pick()) is None:
        return None
    return _move(b, a)


def _move(b: _Builder, a: SSAValue) -> SSAValue:
    s = shape_of(a)
    rank = len(s)
    hl_level = b.dialect == "hl"
    kind = b.choose(["reshape", "permute", "expand", "pad", "shrink", "flip"])
    if kind == "reshape":
        new = (shapes.numel(s),) if rank != 1 else (1, *s)
        return b.add((hl.ReshapeOp if hl_level else ll.ReshapeOp)(a, new))
    if kind == "permute":
        perm = tuple(b.draw(st.permutations(range(rank))))
        return b.add((hl.PermuteOp if hl_level else ll.PermuteOp)(a, perm))
    if kind == "expand":
        grown = tuple(b.draw(st.integers(0, 3)) if d == 1 else d for d in s)
        if hl_level:
            return b.add(hl.BroadcastToOp(a, (b.draw(st.integers(1, 3)), *grown)))
        return b.add(ll.ExpandOp(a, grown))
    if kind == "pad":
        low = tuple(b.draw(st.integers(0, 2)) for _ in s)
        high = tuple(b.draw(st.integers(0, 2)) for _ in s)
        return b.add((hl.PadOp if hl_level else ll.PadOp)(a, low, high, 0.0))
    if kind == "shrink":
        starts = tuple(b.draw(st.integers(0, d)) for d in s)
        limits = tuple(b.draw(st.integers(lo, d)) for lo, d in zip(starts, s, strict=True))
        if hl_level:
            steps = tuple(b.draw(st.integers(1, 3)) for _ in s)
            return b.add(hl.SliceOp(a, starts, limits, steps))
        return b.add(ll.ShrinkOp(a, starts, limits))
    axes = tuple(sorted(b.draw(st.sets(st.integers(0, max(rank - 1, 0)), max_size=rank))))
    axes = tuple(x for x in axes if x < rank)
    return b.add((hl.FlipOp if hl_level else ll.FlipOp)(a, axes))


FAMILIES: dict[str, Callable[[_Builder], SSAValue | None]] = {
    "elementwise": _elementwise, "reduce": _reduce, "movement": _movement,
}


# --------------------------------------------------------------------------- more hl families


def _is_int(v: SSAValue) -> bool:
    return dtypes.is_int(element_of(v))


def _is_bool(v: SSAValue) -> bool:
    return dtypes.is_bool(element_of(v))


def _axes(b: _Builder, rank: int) -> tuple[int, ...]:
    return tuple(sorted(b.draw(st.sets(st.integers(0, max(rank - 1, 0)), max_size=rank))))


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return [*factors, n] if n > 1 else factors


def reshape_target(b: _Builder, shape: Sequence[int], rank: int | None = None) -> tuple[int, ...]:
    """Any shape with as many elements as `shape` (of `rank` if given): axes split,
    merged and size-1 axes added or dropped, so reshapes both are and are not views."""
    n = shapes.numel(shape)
    if rank is None:
        rank = b.draw(st.integers(0 if n == 1 else 1, b.max_rank + 1))
    if n == 0:
        dims = [b.draw(st.integers(0, b.max_dim)) for _ in range(rank)]
        dims[b.draw(st.integers(0, rank - 1))] = 0
        return tuple(dims)
    dims = [1] * rank
    for f in _prime_factors(n):
        dims[b.draw(st.integers(0, rank - 1))] *= f
    return tuple(dims)


def _broadcasting_partner(b: _Builder, a: SSAValue, want: Callable[[SSAValue], bool]
                          ) -> SSAValue | None:
    """A value meeting `want` whose shape broadcasts to `a`'s."""
    def fits(v: SSAValue) -> bool:
        try:
            return want(v) and shapes.broadcast(shape_of(a), shape_of(v)) == shape_of(a)
        except shapes.ShapeError:
            return False

    return b.pick(fits)


def _arith(b: _Builder) -> SSAValue | None:
    """The elementwise ops `elementwise` leaves out: float division and power, integer
    division and remainder (by zero too), logic, casts to every type, a computed where."""
    kind = b.choose(["float", "int", "bool", "not", "cast", "where"])
    want = {"float": _is_float, "int": _is_int, "bool": _is_bool, "not": _is_bool}
    if (a := b.pick(want.get(kind, lambda v: True))) is None:
        return None
    if kind == "not":
        return b.add(hl.NotOp(a))
    if kind == "cast":
        return b.add(hl.CastOp(a, b.choose(dtypes.ELEMENT_TYPES)))
    if kind == "where":
        cond = _broadcasting_partner(b, a, _is_bool)
        if cond is None:
            cond = b.const(shape_of(a), dtypes.BOOL_TYPE)
        return b.add(hl.WhereOp(cond, a, b.partner(a, same_shape=False)))
    ops = {"float": (hl.DivOp, hl.PowOp), "int": (hl.IDivOp, hl.ModOp),
           "bool": (hl.AndOp, hl.OrOp, hl.XorOp)}[kind]
    return b.add(b.choose(ops)(a, b.partner(a, same_shape=False)))


PAD_VALUES = (0.0, 1.0, -2.5, math.inf, -math.inf, math.nan)


def _views(b: _Builder) -> SSAValue | None:
    """Views on views: chains of movement, any reshape, pads of edge values, concat."""
    if (a := b.pick()) is None:
        return None
    s = shape_of(a)
    kind = b.choose(["chain", "reshape", "pad", "concat"])
    if kind == "chain":
        for _ in range(b.draw(st.integers(2, 4))):
            a = _move(b, a)
        return a
    if kind == "reshape":
        return b.add(hl.ReshapeOp(a, reshape_target(b, s)))
    if kind == "pad":
        low = tuple(b.draw(st.integers(0, 3)) for _ in s)
        high = tuple(b.draw(st.integers(0, 3)) for _ in s)
        fits = [v for v in PAD_VALUES if pad_value_problem(v, element_of(a)) is None]
        return b.add(hl.PadOp(a, low, high, b.choose(fits)))
    if not s:
        return None
    axis = b.draw(st.integers(0, len(s) - 1))
    parts = [a]
    for _ in range(b.draw(st.integers(1, 3))):
        size = b.draw(st.integers(0, b.max_dim))
        parts.append(b.fresh((*s[:axis], size, *s[axis + 1:]), element_of(a)))
    return b.add(hl.ConcatOp(b.draw(st.permutations(parts)), axis))


def _linalg(b: _Builder) -> SSAValue | None:
    """matmul of vectors, matrices and broadcast batches, the drawn value on either side."""
    if (a := b.pick(lambda v: _is_numeric(v) and len(shape_of(v)) >= 1)) is None:
        return None
    s, element = shape_of(a), element_of(a)
    n = b.draw(st.integers(0, b.max_dim))
    batch = tuple(d if b.draw(st.booleans()) else 1 for d in s[:-2])
    form = b.choose(["vector", "matrix", "batch"])
    if b.draw(st.booleans()):  # a on the left: the other side contracts over s[-1]
        other = {"vector": (s[-1],), "matrix": (s[-1], n), "batch": (*batch, s[-1], n)}[form]
        lhs, rhs = a, b.fresh(other, element)
    else:
        k = s[-2] if len(s) >= 2 else s[0]
        other = {"vector": (k,), "matrix": (n, k), "batch": (*batch, n, k)}[form]
        lhs, rhs = b.fresh(other, element), a
    try:
        shapes.matmul(shape_of(lhs), shape_of(rhs))
    except shapes.ShapeError:
        return None
    return b.add(hl.MatmulOp(lhs, rhs))


def _window(b: _Builder, hw: Sequence[int], dilate: bool) -> dict[str, tuple[int, ...]] | None:
    """Padding, dilations, a kernel that fits the padded (H, W), and strides."""
    padding = tuple(b.draw(st.integers(0, 2)) for _ in range(4))
    padded = (hw[0] + padding[0] + padding[2], hw[1] + padding[1] + padding[3])
    dilations = tuple(b.draw(st.integers(1, 2)) if dilate else 1 for _ in range(2))
    if min(padded) < 1:
        return None
    kernel = tuple(b.draw(st.integers(1, min(3, (p - 1) // d + 1)))
                   for p, d in zip(padded, dilations, strict=True))
    strides = (b.draw(st.integers(1, 3)), b.draw(st.integers(1, 3)))
    return {"kernel": kernel, "strides": strides, "padding": padding, "dilations": dilations}


def _conv(b: _Builder, a: SSAValue) -> SSAValue | None:
    """conv2d of `a`, reshaped to (N, C, H, W) first when it is not 4-D."""
    if len(shape_of(a)) != 4:
        a = b.add(hl.ReshapeOp(a, reshape_target(b, shape_of(a), rank=4)))
    s = shape_of(a)
    groups = b.choose([g for g in (1, 2, 3) if s[1] % g == 0])
    if (w := _window(b, s[2:], dilate=True)) is None:
        return None
    out = groups * b.draw(st.integers(1, 2))
    weight = b.fresh((out, s[1] // groups, *w["kernel"]), element_of(a))
    return b.add(hl.Conv2dOp(a, weight, w["strides"], w["padding"], w["dilations"], groups))


def _nn(b: _Builder) -> SSAValue | None:
    """The composite float ops: softmaxes, norms, variance, conv2d and pooling."""
    if (a := b.pick(_is_float)) is None:
        return None
    kind = b.choose(
        ["softmax", "log_softmax", "layer_norm", "batch_norm", "group_norm", "var", "conv2d",
         "max_pool2d", "avg_pool2d"])
    least = {"softmax": 1, "log_softmax": 1, "batch_norm": 2, "group_norm": 2,
             "max_pool2d": 2, "avg_pool2d": 2}.get(kind, 0)
    if len(shape_of(a)) < least:  # reshaped to a rank the op takes
        rank = b.draw(st.integers(least, max(least, b.max_rank)))
        a = b.add(hl.ReshapeOp(a, reshape_target(b, shape_of(a), rank)))
    s, rank = shape_of(a), len(shape_of(a))
    if kind in ("softmax", "log_softmax"):
        op = hl.SoftmaxOp if kind == "softmax" else hl.LogSoftmaxOp
        return b.add(op(a, b.draw(st.integers(0, rank - 1))))
    if kind == "layer_norm":
        return b.add(hl.LayerNormOp(a, _axes(b, rank)))
    if kind == "batch_norm":
        return b.add(hl.BatchNormOp(a))
    if kind == "group_norm":
        groups = [g for g in (1, 2, 3, 4) if s[1] % g == 0]
        return b.add(hl.GroupNormOp(a, b.choose(groups)))
    if kind == "var":
        return b.add(hl.VarOp(a, _axes(b, rank), b.draw(st.booleans()),
                              b.draw(st.integers(0, 2))))
    if kind == "conv2d":
        return _conv(b, a)
    if kind in ("max_pool2d", "avg_pool2d"):
        op = hl.MaxPool2dOp if kind == "max_pool2d" else hl.AvgPool2dOp
        if (w := _window(b, s[-2:], dilate=False)) is None:
            return None
        return b.add(op(a, w["kernel"], w["strides"], w["padding"]))
    return None


HL_FAMILIES: dict[str, Callable[[_Builder], SSAValue | None]] = {
    "arith": _arith, "views": _views, "linalg": _linalg, "nn": _nn,
}
ALL_HL_FAMILIES = (*FAMILIES, *HL_FAMILIES)


@st.composite
def programs(
    draw: Draw,
    dialect: str = "hl",
    max_ops: int = 8,
    dtypes: Sequence[Attribute] = (f32,),
    max_rank: int = 3,
    max_dim: int = 4,
    ops: Sequence[str] = ("elementwise", "reduce", "movement"),
    max_results: int = 1,
    special: float = 0.0,
    big: float = 0.0,
    weights: Mapping[str, float] | None = None,
    containing: planting.Containing = None,
) -> Program:
    """Well-typed random `@main` functions in `dialect` ("hl" or "ll"), with inputs.

    `ops` names the families drawn from: "elementwise", "reduce", "movement" at
    both levels; at `hl` also those of `HL_FAMILIES` ("arith", "views",
    "linalg", "nn"; `ALL_HL_FAMILIES` names them all). `@main` returns the last
    value and up to `max_results - 1` others (an argument, or one value twice,
    may be among them). `special` is the chance of an input element being an
    edge value (see `random_input`), `big` that of an argument having one big
    axis (one of `BIG_AXES`). `weights` weighs the families of `ops` (`{"movement": 3}`:
    three times as many movement ops; missing families weigh 1). `containing` is what
    every program must hold (`irtensor.planting`): an op name or a nested pattern such as
    `"hl.neg(hl.neg)"`, planted in each program; an IR snippet or a predicate on the module,
    a filter.
    """
    if dialect not in ("hl", "ll"):
        raise ValueError(f"dialect must be 'hl' or 'll', got {dialect!r}")
    known = [*FAMILIES, *(HL_FAMILIES if dialect == "hl" else ())]
    if unknown := [o for o in ops if o not in known]:
        raise ValueError(f"unknown op families {unknown} for {dialect}; known: {known}")
    families = {**FAMILIES, **HL_FAMILIES}
    b = _Builder(draw, dialect, max_rank, max_dim)
    arg_types = [
        TensorType(draw(st.sampled_from(list(dtypes))), list(b.shape(big)))
        for _ in range(draw(st.integers(1, 3)))
    ]
    b.block = Block(arg_types=arg_types)
    b.values = list(b.block.args)
    pattern = planting.check(containing, dialect)
    for _ in range(draw(st.integers(1, max_ops))):
        families[planting.weighted_family(draw, ops, weights)](b)
    if pattern is not None:
        _plant_last(b, pattern, dialect, ops)
    results = [b.values[-1]]
    for _ in range(draw(st.integers(0, max_results - 1))):
        results.append(draw(st.sampled_from(b.values)))
    b.block.add_op(func.ReturnOp(*results))
    arg_types = [arg.type for arg in b.block.args]
    main = func.FuncOp("main", (arg_types, [r.type for r in results]), Region(b.block))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = [random_input(rng, t, special) for t in arg_types]  # type: ignore[arg-type]
    module = ModuleOp([main])
    if pattern is None and containing is not None:
        from irtensor import ir

        assume(planting.satisfied(containing, module, ir.to_text(module)))
    return Program(module, inputs)


def _plant_last(b: _Builder, pattern: planting.Pattern, dialect: str, ops: Sequence[str]
                ) -> None:
    """Plant `pattern` as the last value, which @main returns: no pass can drop it unseen."""
    planted = planting.plant(b, pattern, lambda name: _families_of(name, dialect, ops))
    b.values.remove(planted)
    b.values.append(planted)


def _families_of(name: str, dialect: str, ops: Sequence[str]) -> list[Callable]:
    """The families that can make op `name` (all of `ops` when no table says)."""
    if name == "ll.const":  # shaped like a value there is, so that it meets it
        return [lambda b: b.const(shape_of(v), element_of(v)) if (v := b.pick()) is not None
                else b.const(b.shape(), f32)]
    made_by = {
        "elementwise": {c.name for c in (*UNARY_FLOAT_HL, *UNARY_NUMERIC_HL, *BINARY_HL,
                                         *COMPARE_HL, *UNARY_FLOAT_LL, *BINARY_LL,
                                         *BINARY_FLOAT_LL)}
        | {"hl.where", "hl.cast", "ll.neg", "ll.cmplt", "ll.cmpeq", "ll.where", "ll.cast"},
        "reduce": {"hl.sum", "hl.max", "hl.min", "hl.mean", "ll.reduce"},
        "movement": {f"{dialect}.{m}" for m in ("reshape", "permute", "broadcast_to", "expand",
                                                "pad", "slice", "shrink", "flip")},
        "arith": {"hl.div", "hl.pow", "hl.idiv", "hl.mod", "hl.and", "hl.or", "hl.xor",
                  "hl.not", "hl.cast", "hl.where"},
        "views": {"hl.concat", "hl.reshape", "hl.pad"},
        "linalg": {"hl.matmul"},
        "nn": {"hl.softmax", "hl.log_softmax", "hl.layer_norm", "hl.batch_norm",
               "hl.group_norm", "hl.var", "hl.conv2d", "hl.max_pool2d", "hl.avg_pool2d"},
    }
    table = {**FAMILIES, **(HL_FAMILIES if dialect == "hl" else {})}
    found = [table[f] for f, names in made_by.items() if name in names and f in table]
    return found or [table[f] for f in ops]
