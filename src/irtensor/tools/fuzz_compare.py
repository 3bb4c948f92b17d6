"""How close a device's results must be to the interpreter's, for the fuzzer.

One op's float result may be off by the dtype's `RTOL` (relative, and as much
absolute near 0), as in the test suite. A program of many ops may be further
off wherever it is ill-conditioned: there a legitimately different order of
rounding (a fused kernel, a split reduction, f32 arithmetic for f16) moves
the result. How far, the program itself tells: it runs again with every float
type widened to f64, and twice more so with every rounding op's result moved
by up to `NUDGE_ULPS` ulps of its own type, at random per element (`noise`:
how far those runs are from each other and from the interpreter). Elements
where those runs disagree on NaN, on infinity or, for integer and bool results
computed from floats, on the value itself are `unstable`: a comparison or a
cast sits on a rounding boundary there, and no answer is wrong. Everywhere
else NaN must be where the interpreter has it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue

from irtensor import dtypes, interp, ir
from irtensor.dialects import hl
from irtensor.dialects._base import element_of, ints, shape_of
from irtensor.testing import RTOL

F64 = np.dtype(np.float64)
NOISE_FACTOR = 2  # a device may round differently from the interpreter by this much more
NUDGE_ULPS = 2
NARROW_FLOAT = re.compile(r"(?<=[<x])(?:bf16|f16|f32)(?=>)")
EXACT_OPS = (hl.NegOp, hl.AbsOp, hl.ReluOp, hl.MaximumOp, hl.MinimumOp, hl.MaxOp, hl.MinOp,
             hl.MaxPool2dOp, hl.WhereOp, *hl.MOVEMENT_OPS)


@dataclass
class Expected:
    """The interpreter's results and, per element, how much a correct device may differ."""

    values: list[np.ndarray]
    noise: list[np.ndarray]
    unstable: list[np.ndarray]
    overflow: bool = False  # some op may overflow: NaN and inf may come out either way


def widened(module: ModuleOp) -> ModuleOp:
    """`module` with every f16, bf16 and f32 tensor element type made f64."""
    return ir.parse(NARROW_FLOAT.sub("f64", ir.to_text(module)))


def _is_float(dtype: np.dtype) -> bool:
    return dtype in RTOL


def rounds(op: Operation) -> bool:
    """Whether `op` rounds: a float result that is not one of its operands' elements."""
    return (not isinstance(op, EXACT_OPS) and op.name.startswith("hl.")
            and len(op.results) == 1 and dtypes.is_float(element_of(op.results[0])))


def terms(op: Operation) -> int:
    """How many terms each result element of `op` adds up (1 for an op that adds none)."""
    shape = shape_of(op.operands[0]) if op.operands else ()
    if isinstance(op, hl.SumOp | hl.MeanOp | hl.VarOp | hl.LayerNormOp):
        count = math.prod(shape[a] for a in ints(op.axes))  # type: ignore[attr-defined]
    elif isinstance(op, hl.MatmulOp):
        count = shape[-1]
    elif isinstance(op, hl.Conv2dOp):
        count = math.prod(shape_of(op.weight)[1:])
    elif isinstance(op, hl.AvgPool2dOp):
        count = math.prod(ints(op.kernel))
    elif isinstance(op, hl.SoftmaxOp | hl.LogSoftmaxOp):
        count = shape[op.axis.value.data]
    elif isinstance(op, hl.BatchNormOp | hl.GroupNormOp):
        groups = op.groups.value.data if isinstance(op, hl.GroupNormOp) else shape[1]
        count = math.prod(shape) // max(shape[0] * groups, 1)
    else:
        return 1
    return max(count, 1)


def nudged(module: ModuleOp) -> tuple[ModuleOp, list[float]]:
    """`module` with each rounding op's result multiplied by a factor that is a new
    argument of @main (after the others) and, for an op that adds up `n` terms, each float
    operand too (in another order or precision, such a sum rounds up to `n` times); with
    the rounding unit of each factor's type, times `n` for an operand's."""
    copy = module.clone()
    main = next(op for op in copy.ops if isinstance(op, func.FuncOp))
    block, units = main.body.block, []

    def factor(value: SSAValue, unit: float) -> hl.MulOp:
        units.append(unit * float(ml_dtypes.finfo(dtypes.to_numpy(element_of(value))).eps))
        return hl.MulOp(value, block.insert_arg(value.type, len(block.args)))

    for op in list(block.ops):
        if not rounds(op):
            continue
        if (n := terms(op)) > 1:
            for i, operand in enumerate(op.operands):
                if dtypes.is_float(element_of(operand)):
                    scaled = factor(operand, n)
                    block.insert_op_before(scaled, op)
                    op.operands[i] = scaled.res
        value = op.results[0]
        scaled = factor(value, 1)
        block.insert_op_after(scaled, op)
        value.replace_uses_with_if(scaled.res, lambda use, s=scaled: use.operation is not s)
    main.function_type = func.FunctionType.from_lists(
        [a.type for a in block.args], list(main.function_type.outputs.data))
    return copy, units


def _kind(x: np.ndarray) -> np.ndarray:
    """0 finite, 1 NaN, 2 +inf, 3 -inf."""
    return np.select([np.isnan(x), x == np.inf, x == -np.inf], [1, 2, 3], 0)


def _wide_runs(module: ModuleOp, inputs: Sequence[np.ndarray], seed: int
               ) -> list[list[np.ndarray]]:
    """The widened program's results, plain and twice nudged."""
    wide_inputs = [np.asarray(x, F64) if _is_float(x.dtype) else x for x in inputs]
    runs = [interp.run(widened(module), wide_inputs)]
    moved, units = nudged(module)
    moved = widened(moved)
    rng = np.random.default_rng(seed)
    factor_types = moved.body.block.first_op.function_type.inputs.data[len(inputs):]  # type: ignore[union-attr]
    for _ in range(2):
        factors = []
        for t, unit in zip(factor_types, units, strict=True):
            assert isinstance(t, TensorType)
            shape = tuple(t.get_shape())
            factors.append(1 + rng.uniform(-NUDGE_ULPS, NUDGE_ULPS, shape) * unit)
        runs.append(interp.run(moved, [*wide_inputs, *factors]))
    return runs


def expected(module: ModuleOp, inputs: Sequence[np.ndarray], seed: int = 0) -> Expected:
    """The interpreter's results on the hl program, with their noise and unstable elements."""
    values = interp.run(module, list(inputs))
    with np.errstate(all="ignore"):
        runs = _wide_runs(module, inputs, seed)
    noise, unstable = [], []
    for i, w in enumerate(values):
        others = [np.asarray(run[i]) for run in runs]
        if not _is_float(w.dtype):
            unstable.append(np.any([o != w for o in others], axis=0))
            noise.append(np.zeros(w.shape))
            continue
        w64 = np.asarray(w, F64)
        with np.errstate(all="ignore"):  # a wide value may overflow the narrow type
            rounded = [np.asarray(o.astype(w.dtype), F64) for o in others]
            spread = np.max([np.abs(w64 - others[0]), *(np.abs(o - others[0])
                                                          for o in others[1:])], axis=0)
        unstable.append(np.any([_kind(r) != _kind(w64) for r in rounded], axis=0))
        noise.append(np.where(np.isfinite(spread), spread, 0.0))
    return Expected(values, noise, unstable)


def compare(got: Sequence[np.ndarray], want: Expected) -> str | None:
    """None if `got` matches, else the first difference as one line."""
    if len(got) != len(want.values):
        return f"{len(got)} results, expected {len(want.values)}"
    for i, (g, w, noise, unstable) in enumerate(
            zip(got, want.values, want.noise, want.unstable, strict=True)):
        g = np.asarray(g)
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"result #{i}: {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        bad = _bad_elements(g, w, noise) & ~unstable
        if want.overflow:  # partial sums may overflow in one order and not in another
            bad &= np.isfinite(np.asarray(g, F64)) & np.isfinite(np.asarray(w, F64))
        if bad.any():
            at = tuple(int(k) for k in np.argwhere(bad)[0])
            return (f"result #{i} ({w.dtype}{list(w.shape)}): {int(bad.sum())} of {bad.size} "
                    f"elements differ; at {list(at)}: got {show(g[at])}, expected "
                    f"{show(w[at])}")
    return None


def show(x: np.generic) -> str:
    """One element as text: floats to 9 digits, ints and bools as they are."""
    return f"{float(x):.9g}" if _is_float(np.asarray(x).dtype) else str(np.asarray(x).item())


def _bad_elements(g: np.ndarray, w: np.ndarray, noise: np.ndarray) -> np.ndarray:
    if not _is_float(w.dtype):
        return np.asarray(g != w)
    g64, w64 = np.asarray(g, F64), np.asarray(w, F64)
    rtol = RTOL[w.dtype]
    with np.errstate(all="ignore"):
        close = np.abs(g64 - w64) <= rtol * (1 + np.abs(w64)) + NOISE_FACTOR * noise
    same_kind = _kind(g64) == _kind(w64)
    finite = np.isfinite(w64) & np.isfinite(g64)
    return ~same_kind | (finite & ~close)
