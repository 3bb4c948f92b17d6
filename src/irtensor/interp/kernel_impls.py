"""The reference semantics of `kernel.kernel`, evaluated with numpy over the whole space.

Each read's map and mask are evaluated on index grids of the iteration space;
the body's scalar ops (arith, math) run elementwise on those arrays; the
combiner reduces over the reduction dimensions; the epilogue runs on the
combined values; the writes map places the result. A read that is valid by
its mask yet falls outside its input is an error, never a wrapped index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IndexType
from xdsl.interpreter import (
    InterpretationError,
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)
from xdsl.ir.affine.affine_set import AffineConstraintKind

from irtensor import dtypes
from irtensor.dialects.kernel import AccessAttr, IndexOp, KernelOp
from irtensor.interp.ll_impls import reduce_max, reduce_sum, scalar_of

Grid = list[np.ndarray]


def index_grid(sizes: Sequence[int]) -> Grid:
    """One broadcastable int64 index array per dimension."""
    rank = len(sizes)
    return [np.arange(s, dtype=np.int64).reshape([s if i == d else 1 for i in range(rank)])
            for d, s in enumerate(sizes)]


def eval_expr(expr: AffineExpr, grid: Grid) -> np.ndarray:
    """An affine expression on index arrays (floordiv and mod round toward -inf)."""
    if isinstance(expr, AffineDimExpr):
        return grid[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return np.asarray(expr.value, dtype=np.int64)
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs, rhs = eval_expr(expr.lhs, grid), eval_expr(expr.rhs, grid)
    return {
        AffineBinaryOpKind.Add: np.add,
        AffineBinaryOpKind.Mul: np.multiply,
        AffineBinaryOpKind.FloorDiv: np.floor_divide,
        AffineBinaryOpKind.CeilDiv: lambda a, b: -np.floor_divide(-a, b),
        AffineBinaryOpKind.Mod: np.mod,
    }[expr.kind](lhs, rhs)


def valid_points(access: AccessAttr, grid: Grid, shape: Sequence[int]) -> np.ndarray:
    valid = np.ones(shape, dtype=bool)
    for c in access.constraints.constraints:
        value = eval_expr(c.lhs, grid) - eval_expr(c.rhs, grid)
        valid &= (value >= 0) if c.kind == AffineConstraintKind.ge else (value == 0)
    return valid


def read(x: np.ndarray, access: AccessAttr, grid: Grid, shape: Sequence[int], where: str
         ) -> np.ndarray:
    """x gathered through `access` at every point; masked points give the pad value."""
    valid = valid_points(access, grid, shape)
    indices = [np.broadcast_to(eval_expr(e, grid), shape) for e in access.affine_map.results]
    for axis, (index, size) in enumerate(zip(indices, x.shape, strict=True)):
        outside = valid & ((index < 0) | (index >= size))
        if outside.any():
            point = tuple(int(i[0]) for i in np.nonzero(outside))
            raise InterpretationError(
                f"{where} reads index {int(index[point])} of axis {axis} (size {size}) at "
                f"point {point}, outside the input"
            )
    if not x.size:
        gathered = np.zeros(shape, dtype=x.dtype)
    else:
        gathered = x[tuple(np.where(valid, i, 0) for i in indices)]
    pad = scalar_of(access.pad_value, dtypes.from_numpy(x.dtype))
    # the body computes in arith's signless types: uint8 is read as int8
    return signless_view(np.where(valid, gathered, pad).astype(x.dtype, copy=False))


def signless_view(x: np.ndarray) -> np.ndarray:
    return x.view(f"i{x.dtype.itemsize}") if x.dtype.kind == "u" else x


# --------------------------------------------------------------------------- scalar ops


def _cmp(predicates: dict[int, Callable[[Any, Any], Any]]) -> Callable[..., Any]:
    def run(op: Operation, a: Any, b: Any) -> Any:
        return predicates[op.predicate.value.data](a, b)  # type: ignore[attr-defined]

    return run


# arith.cmpf predicates by number: 1 oeq, 2 ogt, 3 oge, 4 olt, 5 ole, 6 one, 8 ueq,
# 13 une; arith.cmpi: 0 eq, 1 ne, 2 slt, 3 sle, 4 sgt, 5 sge.
CMPF = {1: np.equal, 2: np.greater, 3: np.greater_equal, 4: np.less, 5: np.less_equal,
        6: lambda a, b: (a < b) | (a > b), 8: lambda a, b: (a == b) | np.isnan(a) | np.isnan(b),
        13: np.not_equal}
def unsigned_view(x: Any) -> np.ndarray:
    """A signless integer array read as unsigned (bool stays bool), as `cmpi ult`,
    `divui`, `extui` and `uitofp` read their operands."""
    x = np.asarray(x)
    return x.view(f"u{x.dtype.itemsize}") if x.dtype.kind == "i" else x


def _unsigned(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda a, b: f(unsigned_view(a), unsigned_view(b))


def _unsigned_result(f: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """An op on the unsigned reading whose result goes back to the operands' type."""
    def run(op: Operation, a: Any, b: Any) -> Any:
        return np.asarray(f(unsigned_view(a), unsigned_view(b))).view(np.asarray(a).dtype)

    return run


CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
        5: np.greater_equal, 6: _unsigned(np.less), 7: _unsigned(np.less_equal),
        8: _unsigned(np.greater), 9: _unsigned(np.greater_equal)}

SCALAR_OPS: dict[type[Operation], Callable[..., Any]] = {
    arith.AddfOp: lambda op, a, b: a + b,
    arith.AddiOp: lambda op, a, b: a + b,
    arith.SubfOp: lambda op, a, b: a - b,
    arith.SubiOp: lambda op, a, b: a - b,
    arith.MulfOp: lambda op, a, b: a * b,
    arith.MuliOp: lambda op, a, b: a * b,
    arith.DivfOp: lambda op, a, b: a / b,
    arith.FloorDivSIOp: lambda op, a, b: np.floor_divide(a, b),
    arith.RemSIOp: lambda op, a, b: np.fmod(a, b),
    arith.NegfOp: lambda op, a: -a,
    arith.MaximumfOp: lambda op, a, b: np.maximum(a, b),
    arith.MinimumfOp: lambda op, a, b: np.minimum(a, b),
    arith.MaxSIOp: lambda op, a, b: np.maximum(a, b),
    arith.MinSIOp: lambda op, a, b: np.minimum(a, b),
    arith.MaxUIOp: _unsigned_result(np.maximum),
    arith.DivUIOp: _unsigned_result(np.floor_divide),
    arith.RemUIOp: _unsigned_result(np.remainder),
    arith.AndIOp: lambda op, a, b: a & b,
    arith.OrIOp: lambda op, a, b: a | b,
    arith.XOrIOp: lambda op, a, b: a ^ b,
    arith.SelectOp: lambda op, c, a, b: np.where(c, a, b),
    arith.CmpfOp: _cmp(CMPF),
    arith.CmpiOp: _cmp(CMPI),
    math.Exp2Op: lambda op, a: np.exp2(a),
    math.Log2Op: lambda op, a: np.log2(a),
    math.SqrtOp: lambda op, a: np.sqrt(a),
    math.SinOp: lambda op, a: np.sin(a),
    math.ExpOp: lambda op, a: np.exp(a),
    math.LogOp: lambda op, a: np.log(a),
}
CASTS = (arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp,
         arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp)


def numpy_type(t: Attribute) -> np.dtype:
    return np.dtype(np.int64) if isinstance(t, IndexType) else dtypes.to_numpy(t)


def run_block(block: Block, args: Sequence[np.ndarray], grid: Grid) -> np.ndarray:
    """The block's scalar ops, applied elementwise to arrays; the yielded array."""
    env: dict[SSAValue, Any] = dict(zip(block.args, args, strict=True))
    for op in block.ops:
        if op is block.last_op:
            return env[op.operands[0]]
        if isinstance(op, IndexOp):
            out = grid[op.dim.value.data]
        elif isinstance(op, arith.ConstantOp):
            value = op.value.value.data  # type: ignore[attr-defined]
            out = np.asarray(value).astype(numpy_type(op.result.type))
        elif isinstance(op, CASTS):
            source = env[op.operands[0]]
            if isinstance(op, arith.ExtUIOp | arith.UIToFPOp):
                source = unsigned_view(source)
            out = dtypes.cast_array(source, numpy_type(op.results[0].type))
        elif type(op) in SCALAR_OPS:
            out = SCALAR_OPS[type(op)](op, *(env[v] for v in op.operands))
        else:
            raise InterpretationError(f"kernel bodies cannot run {op.name} here")
        env[op.results[0]] = np.asarray(out).astype(numpy_type(op.results[0].type), copy=False)
    raise InterpretationError("a kernel block must end with kernel.yield")


def run_kernel(op: KernelOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    sizes = op.sizes
    grid = index_grid(sizes)
    where = f"kernel @{op.sym_name.data}"
    n_body = len(op.body_inputs)
    body_args = [read(x, a, grid, sizes, f"{where} read #{i}")
                 for i, (x, a) in enumerate(zip(inputs[:n_body], op.accesses, strict=False))]
    values = np.broadcast_to(run_block(op.body.block, body_args, grid), sizes)
    space = sizes
    if op.reduction_dims:
        dims = op.reduction_dims
        element = dtypes.from_numpy(values.dtype)
        if op.combiner is not None and op.combiner.data == "max":
            values = reduce_max(values, dims, True, element)
        else:
            values = reduce_sum(values, dims, True)
        space = tuple(1 if d in dims else s for d, s in enumerate(sizes))
        grid = index_grid(space)
        if (block := op.epilogue_block) is not None:
            epi_args = [read(x, a, grid, space, f"{where} read #{n_body + i}")
                        for i, (x, a) in enumerate(zip(inputs[n_body:], op.accesses[n_body:],
                                                       strict=True))]
            values = np.broadcast_to(run_block(block, [values, *epi_args], grid), space)
    out_shape = tuple(op.res.type.get_shape())  # type: ignore[attr-defined]
    out = np.empty(out_shape, dtype=values.dtype)
    result = dtypes.to_numpy(op.res.type.element_type)  # type: ignore[attr-defined]
    positions = [np.broadcast_to(eval_expr(e, grid), space) for e in op.writes.data.results]
    if positions:
        out[tuple(positions)] = values
    else:  # a rank-0 result: the space has a single point
        out[...] = values.reshape(())
    return out.view(result) if result != out.dtype else out


@register_impls
class KernelFunctions(InterpreterFunctions):
    @impl(KernelOp)
    def run_kernel_op(self, interpreter: Interpreter, op: KernelOp, args: PythonValues
                      ) -> PythonValues:
        return (run_kernel(op, [np.asarray(a) for a in args]),)


__all__ = ["KernelFunctions", "run_kernel"]
