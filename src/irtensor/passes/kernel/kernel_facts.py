"""What the schedulers and the lowerings ask of a `kernel.kernel`: its loop order, tiles,
accumulator and the dimensions each read depends on.

In: a `KernelOp` (with or without a schedule); out: plain Python values. Shared by
reorder-loops and split-reductions (the kernel rung) and by the loop and OpenCL lowerings.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType, f32, f64
from xdsl.ir.affine import AffineBinaryOpExpr, AffineDimExpr, AffineExpr

from irtensor.dialects.kernel import AccessAttr, KernelOp, YieldOp


def loop_order(op: KernelOp) -> tuple[int, ...]:
    """The loops outermost first: the schedule's order, or 0..n-1 without one."""
    if op.schedule is not None:
        return tuple(x.data for x in op.schedule.order.data)
    return tuple(range(len(op.sizes)))


def outer_extent(op: KernelOp) -> int:
    """The `stop` of a full run: the size of the outermost loop's dimension (1 at rank 0)."""
    order = loop_order(op)
    return op.sizes[order[0]] if order else 1


def tiles_of(op: KernelOp) -> tuple[int, ...]:
    """The schedule's tile per dimension (0: untiled); a tile as large as its
    dimension is no tile."""
    if op.schedule is None:
        return (0,) * len(op.sizes)
    return tuple(t if 0 < t < s else 0 for t, s in zip(op.schedule.tile_sizes, op.sizes,
                                                      strict=True))


def keeps_partials(op: KernelOp) -> bool:
    """Whether the output can hold a reduction's partial sums between its tiles: the
    accumulator has the output's element type (always so without an epilogue)."""
    body_yield = op.body.block.last_op
    result = op.res.type
    return (isinstance(body_yield, YieldOp) and isinstance(result, TensorType)
            and body_yield.value.type == result.element_type)


def is_contraction(op: KernelOp) -> bool:
    """A float sum whose body yields a product (matmul, conv): each product may be
    fused with its addition (`contract`: one rounding instead of two)."""
    body_yield = op.body.block.last_op
    if not isinstance(body_yield, YieldOp) or op.combiner is None:
        return False
    product = body_yield.value.owner
    return (op.combiner.data == "sum" and isinstance(product, arith.MulfOp)
            and product.result.type in (f32, f64))


def expr_dims(expr: AffineExpr) -> set[int]:
    if isinstance(expr, AffineDimExpr):
        return {expr.position}
    if isinstance(expr, AffineBinaryOpExpr):
        return expr_dims(expr.lhs) | expr_dims(expr.rhs)
    return set()


def access_dims(access: AccessAttr) -> list[int]:
    """The dimensions a read depends on: those of its indices and of its mask."""
    dims: set[int] = set()
    for e in access.affine_map.results:
        dims |= expr_dims(e)
    for c in access.constraints.constraints:
        dims |= expr_dims(c.lhs) | expr_dims(c.rhs)
    return sorted(dims)
