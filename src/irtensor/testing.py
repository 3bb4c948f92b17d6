"""Tools for property-testing irtensor IR with hypothesis.

`programs()` draws well-typed random programs in `hl` or `ll` together with
matching numpy inputs; shapes include size-1 and zero-size axes and rank 0.
`register_profiles()` adds the `ci` and `dev` hypothesis profiles. Use::

    from irtensor.testing import programs
    from hypothesis import given

    @given(programs(dialect="ll", max_ops=6))
    def test_my_pass(program): ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from irtensor import dtypes, shapes
from irtensor.dialects import hl, ll
from irtensor.dialects._base import element_of, shape_of


def register_profiles() -> None:
    """Hypothesis profiles: `ci` (enough examples to mean something, bounded time), `dev`."""
    slow_ok = [HealthCheck.too_slow]
    settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=slow_ok)
    settings.register_profile("dev", max_examples=50, deadline=None, suppress_health_check=slow_ok)


@dataclass
class Program:
    """A module whose `@main` takes `inputs` (numpy arrays of the argument types)."""

    module: ModuleOp
    inputs: list[np.ndarray]

    def __str__(self) -> str:
        return str(self.module)


Draw = Callable[[st.SearchStrategy], object]


def random_input(rng: np.random.Generator, t: TensorType) -> np.ndarray:
    shape, element = tuple(t.get_shape()), t.element_type
    if dtypes.is_bool(element):
        return rng.random(shape) < 0.5
    if dtypes.is_int(element):
        return rng.integers(-8, 9, shape).astype(dtypes.to_numpy(element))
    return (rng.standard_normal(shape) * 2).astype(dtypes.to_numpy(element))


class _Builder:
    """Grows one function body from drawn choices; every op is valid by construction."""

    def __init__(self, draw: Draw, dialect: str, max_rank: int, max_dim: int):
        self.draw, self.dialect = draw, dialect
        self.max_rank, self.max_dim = max_rank, max_dim
        self.block = Block()
        self.values: list[SSAValue] = []

    def shape(self) -> tuple[int, ...]:
        rank = self.draw(st.integers(0, self.max_rank))
        return tuple(self.draw(st.integers(0, self.max_dim)) for _ in range(rank))

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        self.values.append(op.results[0])
        return op.results[0]

    def pick(self, want: Callable[[SSAValue], bool] = lambda v: True) -> SSAValue | None:
        fits = [v for v in self.values if want(v)]
        return self.draw(st.sampled_from(fits)) if fits else None

    def const(self, shape: Sequence[int], element: Attribute) -> SSAValue:
        if dtypes.is_bool(element):
            value: float | int | bool = self.draw(st.booleans())
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


def _is_float(v: SSAValue) -> bool:
    return dtypes.is_float(element_of(v))


def _is_numeric(v: SSAValue) -> bool:
    return not dtypes.is_bool(element_of(v))


def _elementwise(b: _Builder) -> SSAValue | None:
    hl_level = b.dialect == "hl"
    kind = b.draw(st.sampled_from(["unary", "binary", "compare", "where", "cast"]))
    if kind == "unary":
        floats = UNARY_FLOAT_HL if hl_level else UNARY_FLOAT_LL
        numeric = UNARY_NUMERIC_HL if hl_level else (ll.NegOp,)
        if (a := b.pick(_is_numeric)) is None:
            return None
        choices = (floats + numeric) if _is_float(a) else numeric
        return b.add(b.draw(st.sampled_from(choices))(a))
    if kind in ("binary", "compare"):
        if (a := b.pick(_is_numeric)) is None:
            return None
        other = b.partner(a, same_shape=not hl_level)
        if kind == "compare":
            ops = COMPARE_HL if hl_level else (ll.CmpLtOp, ll.CmpEqOp)
        else:
            ops = BINARY_HL if hl_level else BINARY_LL
        return b.add(b.draw(st.sampled_from(ops))(a, other))
    if kind == "where":
        if (a := b.pick()) is None:
            return None
        other = b.partner(a, same_shape=True)
        cond = b.partner(b.const(shape_of(a), dtypes.BOOL_TYPE), same_shape=True)
        return b.add((hl.WhereOp if hl_level else ll.WhereOp)(cond, a, other))
    if (a := b.pick()) is None:
        return None
    target = b.draw(st.sampled_from([f32, *dtypes.INT_TYPES, dtypes.BOOL_TYPE]))
    return b.add((hl.CastOp if hl_level else ll.CastOp)(a, target))


def _reduce(b: _Builder) -> SSAValue | None:
    if (a := b.pick(_is_numeric)) is None:
        return None
    rank = len(shape_of(a))
    axes = tuple(sorted(b.draw(st.sets(st.integers(0, max(rank - 1, 0)), max_size=rank))))
    axes = tuple(x for x in axes if x < rank)
    if b.dialect == "ll":
        return b.add(ll.ReduceOp(b.draw(st.sampled_from(["sum", "max"])), a, axes))
    ops = [hl.SumOp, hl.MaxOp, hl.MinOp] + ([hl.MeanOp] if _is_float(a) else [])
    return b.add(b.draw(st.sampled_from(ops))(a, axes, b.draw(st.booleans())))


def _movement(b: _Builder) -> SSAValue | None:
    if (a := b.pick()) is None:
        return None
    s = shape_of(a)
    rank = len(s)
    hl_level = b.dialect == "hl"
    kind = b.draw(st.sampled_from(["reshape", "permute", "expand", "pad", "shrink", "flip"]))
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


FAMILIES = {"elementwise": _elementwise, "reduce": _reduce, "movement": _movement}


@st.composite
def programs(
    draw: Draw,
    dialect: str = "hl",
    max_ops: int = 8,
    dtypes: Sequence[Attribute] = (f32,),
    max_rank: int = 3,
    max_dim: int = 4,
    ops: Sequence[str] = ("elementwise", "reduce", "movement"),
) -> Program:
    """Well-typed random `@main` functions in `dialect` ("hl" or "ll"), with inputs.

    `ops` names the families drawn from: "elementwise", "reduce", "movement".
    """
    if dialect not in ("hl", "ll"):
        raise ValueError(f"dialect must be 'hl' or 'll', got {dialect!r}")
    b = _Builder(draw, dialect, max_rank, max_dim)
    arg_types = [
        TensorType(draw(st.sampled_from(list(dtypes))), list(b.shape()))
        for _ in range(draw(st.integers(1, 3)))
    ]
    b.block = Block(arg_types=arg_types)
    b.values = list(b.block.args)
    for _ in range(draw(st.integers(1, max_ops))):
        FAMILIES[draw(st.sampled_from(list(ops)))](b)
    results = [b.values[-1]]
    b.block.add_op(func.ReturnOp(*results))
    main = func.FuncOp("main", (arg_types, [r.type for r in results]), Region(b.block))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return Program(ModuleOp([main]), [random_input(rng, t) for t in arg_types])


def assert_same_results(
    got: Sequence[np.ndarray], want: Sequence[np.ndarray], rtol: float = 1e-6, atol: float = 1e-6
) -> None:
    """Equal dtypes and shapes; floats close (NaN where NaN), ints and bools exact."""
    assert len(got) == len(want), f"{len(got)} results, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.dtype == w.dtype, f"result #{i}: dtype {g.dtype}, expected {w.dtype}"
        assert g.shape == w.shape, f"result #{i}: shape {g.shape}, expected {w.shape}"
        if np.issubdtype(w.dtype, np.integer) or w.dtype == np.bool_:
            np.testing.assert_array_equal(g, w, err_msg=f"result #{i}")
        else:
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            np.testing.assert_allclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"result #{i}")


def assert_preserves_semantics(
    pipeline: str | ModulePass | Sequence[ModulePass | str],
    module: ModuleOp,
    inputs: Sequence[np.ndarray],
    rtol: float = 1e-6,
    atol: float = 1e-6,
    fn: str = "main",
) -> ModuleOp:
    """Run `pipeline` on a copy of `module`; the interpreter must give the same results.

    Returns the rewritten module. On a mismatch the assertion shows the IR
    before and after; inside a hypothesis test, hypothesis shrinks the program
    to the smallest that still fails.
    """
    from irtensor import ir
    from irtensor.interp import run
    from irtensor.pipeline import Pipeline

    after = module.clone()
    Pipeline([pipeline] if isinstance(pipeline, ModulePass) else pipeline).run(after)
    want = run(module, list(inputs), fn=fn)
    got = run(after, list(inputs), fn=fn)
    try:
        assert_same_results(got, want, rtol, atol)
    except AssertionError as e:
        raise AssertionError(
            f"the pipeline changed the results of @{fn}: {e}\n"
            f"--- IR before ---\n{ir.to_text(module)}--- IR after ---\n{ir.to_text(after)}"
        ) from None
    return after


def assert_reads_in_bounds(module: ModuleOp) -> int:
    """Every read of every kernel, at every point of its space where its mask
    holds, indexes inside its input. Returns how many reads were checked."""
    from irtensor.dialects.kernel import KernelOp
    from irtensor.interp.kernel_impls import eval_expr, index_grid, valid_points

    checked = 0
    for op in module.walk():
        if not isinstance(op, KernelOp):
            continue
        n_body = len(op.body_inputs)
        full = op.sizes
        reduced = tuple(1 if d in op.reduction_dims else s for d, s in enumerate(full))
        for i, (value, access) in enumerate(zip(op.inputs, op.accesses, strict=True)):
            space = full if i < n_body else reduced
            grid = index_grid(space)
            valid = valid_points(access, grid, space)
            shape = value.type.get_shape()  # type: ignore[attr-defined]
            for axis, expr in enumerate(access.affine_map.results):
                index = np.broadcast_to(eval_expr(expr, grid), space)
                bad = valid & ((index < 0) | (index >= shape[axis]))
                assert not bad.any(), (
                    f"kernel @{op.sym_name.data} read #{i} axis {axis}: index "
                    f"{int(index[bad][0])} outside size {shape[axis]}"
                )
            checked += 1
    return checked
